//! The OpenAI Chat Completions wire format, spoken by OpenAI and most other servers (OpenRouter, Ollama, vLLM,
//! llama.cpp, LM Studio, DeepSeek): the request body, and the streamed chunks turned into a `Completion`.
//!
//! A reasoning model's effort goes out as `"reasoning_effort": "low" | "medium" | "high"` (and gpt-5's "minimal"),
//! the Chat Completions parameter documented at <https://platform.openai.com/docs/api-reference/chat/create>; only
//! for models that can reason (see `crate::models::Catalog::thinking`), since other models refuse it.

use std::borrow::Cow;
use std::sync::Mutex;

use bytes::Bytes;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde_json::{Value, json};

use super::caps;
use super::transport::{Outbox, StreamHandler, Transport};
use super::wire::{self, ArrayWriter, BodyWriter, Encoded, Form, Kept, PreparedRequest};
use super::{Completion, ProviderConfig, ProviderError, ProviderEvent, Thinking, WireFormat};
use tern_http::sse::SseEvent;
use tern_protocol::ToolDefinition;
use tern_protocol::{FinishReason, Image, Message, Reasoning, ToolCall, Usage};
#[cfg(test)]
use {super::ChatRequest, tokio::sync::mpsc::UnboundedSender};

pub(crate) struct OpenAiProvider {
    transport: Transport,
    model: String,
    max_tokens: Option<u32>,
    /// api.openai.com wants `max_completion_tokens` (its reasoning models refuse `max_tokens`); compatible servers
    /// mostly know only `max_tokens`.
    completion_tokens_field: bool,
    thinking: Thinking,
    /// What tern knows of models: how each may think, its output limit.
    catalog: std::sync::Arc<crate::models::Catalog>,
    /// The last request's body, to grow the next one from.
    pub(super) last: Mutex<Option<Kept>>,
}

impl OpenAiProvider {
    pub(crate) fn new(config: &ProviderConfig) -> Result<Self, ProviderError> {
        let mut auth = HeaderMap::new();
        if let Some(key) = config.api_key.as_deref().map(str::trim).filter(|k| !k.is_empty()) {
            let mut value = HeaderValue::from_str(&format!("Bearer {key}"))
                .map_err(|_| ProviderError::Config("the API key contains characters a header cannot hold".into()))?;
            value.set_sensitive(true);
            auth.insert(AUTHORIZATION, value);
        }
        let transport = Transport::new(config, "/chat/completions", auth)?;
        Ok(Self {
            transport,
            model: config.model.clone(),
            max_tokens: config.max_tokens,
            completion_tokens_field: config.base_url.contains("api.openai.com"),
            thinking: config.thinking,
            catalog: config.catalog.clone(),
            last: Mutex::new(None),
        })
    }

    /// The body as one JSON value (what `body_bytes` writes, byte for byte).
    #[cfg(test)]
    pub(super) fn body(&self, request: &ChatRequest) -> Value {
        let messages = Value::Array(messages(&request.system, &request.messages));
        self.skeleton(&request.model, &request.tools, request.max_tokens, messages)
    }

    /// The body around `messages` (the whole list, or `wire::messages_slot()` to splice encoded messages into).
    fn skeleton(&self, model: &str, tools: &[ToolDefinition], max_tokens: Option<u32>, messages: Value) -> Value {
        let model = if model.is_empty() { &self.model } else { model };
        let mut body = json!({
            "model": model,
            "messages": messages,
            "stream": true,
            "stream_options": {"include_usage": true},
        });
        if !tools.is_empty() {
            body["tools"] = self::tools(tools);
        }
        if let Some(effort) = self.catalog.thinking(model, self.thinking).effort {
            body["reasoning_effort"] = json!(effort.as_str());
        }
        if let Some(max) = max_tokens.or(self.max_tokens) {
            let field = if self.completion_tokens_field {
                "max_completion_tokens"
            } else {
                "max_tokens"
            };
            body[field] = json!(max);
        }
        body
    }

    /// The body's bytes, with each message's stored wire form reused and the others encoded now, written once; in a
    /// growing conversation, the last body grown by the new messages (`wire::Kept`).
    pub(super) fn body_bytes(&self, request: &PreparedRequest<'_>) -> Result<Bytes, ProviderError> {
        let skeleton = self.skeleton(request.model, request.tools, request.max_tokens, wire::messages_slot());
        let (prefix, suffix) = wire::split_skeleton(&skeleton)?;
        let system = if request.system.is_empty() {
            Vec::new()
        } else {
            wire::to_bytes(&json!({"role": "system", "content": request.system}))?
        };
        let mut head = prefix.clone();
        head.push(b'[');
        head.extend_from_slice(&system);
        // A body can be kept and grown while its messages are stored without images (those move as the conversation
        // grows).
        let message = |i| match request.stored(i, true) {
            Some(Form::OpenAi { message, tool_images }) if tool_images.is_empty() => {
                Some(std::slice::from_ref(message))
            }
            _ => None,
        };
        wire::grow_or_write(&self.last, &head, request, message, &suffix, || {
            self.write_whole(request, &prefix, suffix.clone(), &system)
        })
    }

    /// The whole body, each message's stored wire form reused and the others encoded now, written once.
    fn write_whole(
        &self,
        request: &PreparedRequest<'_>,
        prefix: &[u8],
        suffix: Vec<u8>,
        system: &[u8],
    ) -> Result<Vec<u8>, ProviderError> {
        let stored: usize = (0..request.messages.len())
            .map(|i| match request.stored(i, true) {
                Some(Form::OpenAi { message, .. }) => message.len() + 1,
                _ => 0,
            })
            .sum();
        let mut body = BodyWriter::from_parts(prefix, suffix, stored + system.len() + 64);
        if !system.is_empty() {
            body.push(system);
        }
        // The parts of the user message that follows a run of tool messages with images (rare: built apart).
        let mut tool_images: Option<ArrayWriter> = None;
        for (i, message) in request.messages.iter().enumerate() {
            let fresh;
            let form = match request.stored(i, true) {
                Some(form) => form,
                None => {
                    fresh = encode_form(message)?;
                    &fresh
                }
            };
            let Form::OpenAi {
                message: bytes,
                tool_images: parts,
            } = form
            else {
                continue;
            };
            if !matches!(message, Message::Tool { .. })
                && let Some(parts) = tool_images.take()
            {
                flush_images(&mut body, parts);
            }
            body.push(bytes);
            for part in parts {
                tool_images
                    .get_or_insert_with(|| ArrayWriter::with_capacity(part.len()))
                    .push(part);
            }
        }
        if let Some(parts) = tool_images {
            flush_images(&mut body, parts);
        }
        Ok(body.finish_vec())
    }
}

/// The user message holding the images of a run of tool results.
fn flush_images(body: &mut BodyWriter, parts: ArrayWriter) {
    let out = body.element();
    wire::open_role_message(out, "user");
    out.extend_from_slice(&parts.finish());
    out.push(b'}');
}

/// One message's wire form.
pub(crate) fn encode(message: &Message) -> Result<Encoded, ProviderError> {
    encode_form(message).map(Encoded::new)
}

fn encode_form(message: &Message) -> Result<Form, ProviderError> {
    let (main, parts) = message_values(message);
    Ok(Form::OpenAi {
        message: wire::to_bytes(&main)?,
        tool_images: parts.iter().map(wire::to_bytes).collect::<Result<_, _>>()?,
    })
}

impl WireFormat for OpenAiProvider {
    const PROVIDER: &'static str = "openai";
    type Stream = OpenAiStream;

    fn model(&self) -> &str {
        &self.model
    }

    fn transport(&self) -> &Transport {
        &self.transport
    }

    fn body(&self, request: &PreparedRequest<'_>) -> Result<Bytes, ProviderError> {
        self.body_bytes(request)
    }

    fn encode(message: &Message) -> Result<Encoded, ProviderError> {
        encode(message)
    }
}

fn tools(definitions: &[ToolDefinition]) -> Value {
    definitions
        .iter()
        .map(|d| {
            json!({
                "type": "function",
                "function": {"name": d.name, "description": d.description, "parameters": d.parameters},
            })
        })
        .collect()
}

fn image_part(image: &Image) -> Value {
    json!({
        "type": "image_url",
        "image_url": {"url": format!("data:{};base64,{}", image.media_type, image.data_base64)},
    })
}

/// Our conversation as chat messages. Tool results become `tool` messages; since those carry only text, images a
/// tool returned follow the run of tool messages as one user message.
#[cfg(test)]
pub(crate) fn messages(system: &str, conversation: &[Message]) -> Vec<Value> {
    let mut out = Vec::with_capacity(conversation.len() + 1);
    if !system.is_empty() {
        out.push(json!({"role": "system", "content": system}));
    }
    let mut tool_images: Vec<Value> = Vec::new();
    for message in conversation {
        if !matches!(message, Message::Tool { .. }) {
            flush_tool_images(&mut out, &mut tool_images);
        }
        let (main, parts) = message_values(message);
        out.push(main);
        tool_images.extend(parts);
    }
    flush_tool_images(&mut out, &mut tool_images);
    out
}

/// One message as a chat message, and for a tool result with images the parts it adds to the user message that
/// follows the run of tool messages.
fn message_values(message: &Message) -> (Value, Vec<Value>) {
    match message {
        Message::User { content, images } if images.is_empty() => (json!({"role": "user", "content": content}), vec![]),
        Message::User { content, images } => {
            let mut parts = vec![json!({"type": "text", "text": content})];
            parts.extend(images.iter().map(image_part));
            (json!({"role": "user", "content": parts}), vec![])
        }
        Message::Assistant {
            content, tool_calls, ..
        } => {
            // Reasoning is not sent back: several servers (DeepSeek among them) reject it in input messages.
            let mut m = json!({"role": "assistant", "content": content});
            if !tool_calls.is_empty() {
                if content.is_empty() {
                    m["content"] = Value::Null;
                }
                m["tool_calls"] = tool_calls.iter().map(wire_tool_call).collect();
            }
            (m, vec![])
        }
        Message::Tool {
            call_id,
            name,
            content,
            images,
            ..
        } => {
            let main = json!({"role": "tool", "tool_call_id": call_id, "content": content});
            let mut parts = Vec::new();
            if !images.is_empty() {
                parts.push(json!({"type": "text", "text": format!("Image(s) returned by {name} ({call_id}):")}));
                parts.extend(images.iter().map(image_part));
            }
            (main, parts)
        }
    }
}

#[cfg(test)]
fn flush_tool_images(out: &mut Vec<Value>, parts: &mut Vec<Value>) {
    if !parts.is_empty() {
        out.push(json!({"role": "user", "content": std::mem::take(parts)}));
    }
}

/// Arguments travel as a JSON string. Text that was never valid JSON is sent as `{}`: servers that parse the
/// history (Ollama, vLLM) reject the whole request otherwise, and the tool result already told the model.
fn wire_tool_call(call: &ToolCall) -> Value {
    let arguments = match &call.arguments {
        Value::String(raw) if serde_json::from_str::<Value>(raw).is_ok() => raw.clone(),
        Value::String(_) | Value::Null => "{}".to_string(),
        other => other.to_string(),
    };
    json!({"id": call.id, "type": "function", "function": {"name": call.name, "arguments": arguments}})
}

/// A tool call being assembled from deltas.
#[derive(Debug, Default)]
struct PartialCall {
    /// The wire index the deltas use.
    index: u64,
    id: String,
    name: String,
    arguments: String,
    announced: bool,
}

/// Assembles one streamed answer.
#[derive(Debug, Default)]
pub(crate) struct OpenAiStream {
    content: String,
    reasoning: String,
    calls: Vec<PartialCall>,
    /// Calls announced with `ToolCallStarted` so far.
    announced: usize,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    /// Whether a chunk of a chat completion (one with `choices`) arrived.
    seen_chunk: bool,
}

impl OpenAiStream {
    fn on_tool_delta(&mut self, position: usize, delta: &Value, events: &mut Outbox<'_>) -> Result<(), ProviderError> {
        let index = delta.get("index").and_then(Value::as_u64).unwrap_or(position as u64);
        let id = delta.get("id").and_then(Value::as_str).unwrap_or_default();
        let function = delta.get("function");
        let name = function
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let arguments = function.and_then(|f| f.get("arguments"));
        // The latest call with this index; a different id under a used index (some servers number every call 0)
        // starts a new call.
        let slot = match self.calls.iter().rposition(|c| c.index == index) {
            Some(i) if id.is_empty() || self.calls.get(i).is_some_and(|c| c.id.is_empty() || c.id == id) => i,
            _ => {
                self.calls.push(PartialCall {
                    index,
                    ..PartialCall::default()
                });
                self.calls.len() - 1
            }
        };
        let all: usize = self.calls.iter().map(|c| c.arguments.len()).sum();
        let Some(call) = self.calls.get_mut(slot) else {
            return Ok(());
        };
        if call.id.is_empty() && !id.is_empty() {
            call.id = id.to_string();
        }
        // Names normally come whole in the first delta; some servers repeat them, a few split them.
        if !name.is_empty() && call.name != name {
            call.name.push_str(name);
        }
        let fragment = match arguments {
            Some(Value::String(fragment)) => Cow::Borrowed(fragment.as_str()),
            // A server that sends the arguments as an object, in one piece.
            Some(value @ Value::Object(_)) => Cow::Owned(value.to_string()),
            _ => Cow::Borrowed(""),
        };
        caps::fits(caps::Part::AllArguments, all, fragment.len())?;
        caps::append(&mut call.arguments, &fragment, caps::Part::CallArguments)?;
        if !call.announced && !call.name.is_empty() {
            call.announced = true;
            if call.id.is_empty() {
                call.id = super::generated_call_id();
            }
            let started = ProviderEvent::ToolCallStarted {
                index: self.announced,
                id: call.id.clone(),
                name: call.name.clone(),
            };
            self.announced += 1;
            events.push(started);
        }
        Ok(())
    }
}

/// The chunk that makes up most of a stream: text or reasoning for choice 0, perhaps its finish reason, and nothing
/// else. It is read with borrowed strings instead of a `Value` tree per token; any other chunk (tool calls, usage, an
/// error, other choices, a field of another type, a repeated key) is read as a `Value`, as before.
#[derive(serde::Deserialize)]
struct TextChunk<'a> {
    #[serde(borrow)]
    choices: [TextChoice<'a>; 1],
    #[serde(default)]
    usage: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
}

#[derive(serde::Deserialize)]
struct TextChoice<'a> {
    #[serde(default)]
    index: u64,
    #[serde(borrow, default)]
    delta: Option<TextDelta<'a>>,
    #[serde(borrow, default)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(serde::Deserialize)]
struct TextDelta<'a> {
    #[serde(borrow, default)]
    content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    reasoning_content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    reasoning: Option<Cow<'a, str>>,
    #[serde(default)]
    tool_calls: Option<serde::de::IgnoredAny>,
}

impl OpenAiStream {
    /// Handles `data` if it is a `TextChunk`; false when it is not (the caller reads it as a `Value`).
    fn on_text_chunk(&mut self, data: &str, events: &mut Outbox<'_>) -> Result<bool, ProviderError> {
        let Ok(TextChunk {
            choices: [choice],
            usage: None,
            error: None,
        }) = serde_json::from_str::<TextChunk>(data)
        else {
            return Ok(false);
        };
        if choice.index != 0 || choice.delta.as_ref().is_some_and(|d| d.tool_calls.is_some()) {
            return Ok(false);
        }
        self.seen_chunk = true;
        if let Some(delta) = &choice.delta {
            let reasoning = delta.reasoning_content.as_deref().or(delta.reasoning.as_deref());
            if let Some(text) = reasoning.filter(|t| !t.is_empty()) {
                caps::append(&mut self.reasoning, text, caps::Part::Reasoning)?;
                events.reasoning(text);
            }
            if let Some(text) = delta.content.as_deref().filter(|t| !t.is_empty()) {
                caps::append(&mut self.content, text, caps::Part::Answer)?;
                events.text(text);
            }
        }
        if let Some(reason) = choice.finish_reason {
            self.finish_reason = Some(reason.into_owned());
        }
        Ok(true)
    }
}

impl StreamHandler for OpenAiStream {
    fn on_event(&mut self, event: SseEvent, events: &mut Outbox<'_>) -> Result<bool, ProviderError> {
        if event.is_done() {
            return Ok(true);
        }
        if self.on_text_chunk(&event.data, events)? {
            return Ok(false);
        }
        let chunk: Value = match serde_json::from_str(&event.data) {
            Ok(chunk) => chunk,
            Err(e) => {
                tracing::warn!(error = %e, data = %super::sse_excerpt(&event.data), "skipping an unreadable chunk");
                return Ok(false);
            }
        };
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .or(error.as_str())
                .unwrap_or("unknown error");
            let kind = error
                .get("type")
                .or_else(|| error.get("code"))
                .and_then(Value::as_str)
                .unwrap_or("error");
            return Err(ProviderError::Api {
                kind: kind.to_string(),
                message: message.to_string(),
            });
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(parse_usage(usage));
        }
        let choices = chunk.get("choices").and_then(Value::as_array);
        self.seen_chunk |= choices.is_some();
        // One completion was asked for; other choices (n > 1) are not ours.
        let Some(choice) = choices.and_then(|c| {
            c.iter()
                .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
        }) else {
            return Ok(false);
        };
        if let Some(delta) = choice.get("delta") {
            let reasoning = delta
                .get("reasoning_content")
                .and_then(Value::as_str)
                .or_else(|| delta.get("reasoning").and_then(Value::as_str));
            if let Some(text) = reasoning.filter(|t| !t.is_empty()) {
                caps::append(&mut self.reasoning, text, caps::Part::Reasoning)?;
                events.reasoning(text);
            }
            if let Some(text) = delta.get("content").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                caps::append(&mut self.content, text, caps::Part::Answer)?;
                events.text(text);
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for (position, call) in calls.iter().enumerate() {
                    self.on_tool_delta(position, call, events)?;
                }
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_string());
        }
        Ok(false)
    }

    fn is_complete(&self) -> bool {
        self.finish_reason.is_some()
    }

    fn has_message(&self) -> bool {
        self.seen_chunk
    }

    fn has_output(&self) -> bool {
        !self.content.is_empty() || !self.reasoning.is_empty() || !self.calls.is_empty()
    }

    fn finish(self) -> Completion {
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for call in self.calls {
            if call.name.is_empty() {
                tracing::warn!(id = %call.id, arguments = %call.arguments.len(), "dropping a tool call with no name");
                continue;
            }
            tool_calls.push(ToolCall {
                id: if call.id.is_empty() {
                    super::generated_call_id()
                } else {
                    call.id
                },
                name: call.name,
                arguments: super::parse_arguments(&call.arguments),
            });
        }
        let finish_reason = match self.finish_reason.as_deref() {
            // Some servers (Ollama among them) say "stop" after tool calls.
            Some("stop") | None if !tool_calls.is_empty() => FinishReason::ToolCalls,
            Some("stop") | None => FinishReason::Stop,
            Some("tool_calls" | "function_call") => FinishReason::ToolCalls,
            Some("length") => FinishReason::Length,
            Some("content_filter") => FinishReason::ContentFilter,
            Some(other) => FinishReason::Other(other.to_string()),
        };
        Completion {
            content: self.content,
            reasoning: (!self.reasoning.is_empty()).then(|| Reasoning::text(self.reasoning)),
            tool_calls,
            finish_reason,
            usage: self.usage.unwrap_or_default(),
        }
    }
}

/// `prompt_tokens` already counts the cached part, which matches our `input_tokens`.
fn parse_usage(usage: &Value) -> Usage {
    let number = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input_tokens: number(usage.get("prompt_tokens")),
        output_tokens: number(usage.get("completion_tokens")),
        cache_read_tokens: number(usage.pointer("/prompt_tokens_details/cached_tokens")),
        cache_write_tokens: 0,
    }
}

#[cfg(test)]
mod tests;
