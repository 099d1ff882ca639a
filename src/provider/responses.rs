//! The OpenAI Responses wire format (`wire_api = "responses"`): the request body (`instructions`, `input` items,
//! flat function tools) and the streamed events (`response.output_text.delta`, `response.reasoning_summary_text.delta`,
//! `response.function_call_arguments.delta`, `response.output_item.done`, `response.completed`, errors) turned into
//! a `Completion`, following <https://platform.openai.com/docs/api-reference/responses/create> and
//! <https://platform.openai.com/docs/api-reference/responses-streaming>.
//!
//! Nothing is stored on OpenAI's side (`store: false`), as codex does: every request carries the whole
//! conversation. A reasoning model's reasoning is carried between requests as its encrypted content (asked for with
//! `include: ["reasoning.encrypted_content"]`) in `reasoning` input items sent back without their ids: with
//! `store: false` an id refers to nothing and the API rejects it. Reasoning items without encrypted content are
//! shown but never sent back. Each message's items are encoded once and spliced into later bodies (`wire.rs`).

use std::sync::Mutex;

use bytes::Bytes;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde_json::{Value, json};

use super::caps;
use super::transport::{Outbox, StreamHandler, Transport};
use super::wire::{self, BodyWriter, Encoded, Form, Kept, PreparedRequest};
use super::{Completion, ProviderConfig, ProviderError, ProviderEvent, Thinking, WireFormat};
use tern_http::sse::SseEvent;
use tern_protocol::{FinishReason, Image, Message, Reasoning, ReasoningBlock, ToolCall, ToolDefinition, Usage};
#[cfg(test)]
use {super::ChatRequest, tokio::sync::mpsc::UnboundedSender};

pub(crate) struct ResponsesProvider {
    transport: Transport,
    model: String,
    max_tokens: Option<u32>,
    thinking: Thinking,
    /// What tern knows of models: how each may think, its output limit.
    catalog: std::sync::Arc<crate::models::Catalog>,
    /// The last request's body, to grow the next one from.
    pub(super) last: Mutex<Option<Kept>>,
}

impl ResponsesProvider {
    pub(crate) fn new(config: &ProviderConfig) -> Result<Self, ProviderError> {
        let mut auth = HeaderMap::new();
        if let Some(key) = config.api_key.as_deref().map(str::trim).filter(|k| !k.is_empty()) {
            let mut value = HeaderValue::from_str(&format!("Bearer {key}"))
                .map_err(|_| ProviderError::Config("the API key contains characters a header cannot hold".into()))?;
            value.set_sensitive(true);
            auth.insert(AUTHORIZATION, value);
        }
        Ok(Self {
            transport: Transport::new(config, "/responses", auth)?,
            model: config.model.clone(),
            max_tokens: config.max_tokens,
            thinking: config.thinking,
            catalog: config.catalog.clone(),
            last: Mutex::new(None),
        })
    }

    /// The body as one JSON value (what `body_bytes` writes, byte for byte).
    #[cfg(test)]
    pub(super) fn body(&self, request: &ChatRequest) -> Value {
        let input: Vec<Value> = request.messages.iter().flat_map(message_items).collect();
        self.skeleton(&request.prepared(), Value::Array(input))
    }

    /// The body around `input` (the whole list, or `wire::messages_slot()` to splice encoded items into).
    fn skeleton(&self, request: &PreparedRequest<'_>, input: Value) -> Value {
        let model = if request.model.is_empty() {
            &self.model
        } else {
            request.model
        };
        let mut body = json!({
            "model": model,
            "input": input,
            "stream": true,
            "store": false,
        });
        if !request.system.is_empty() {
            body["instructions"] = json!(request.system);
        }
        if !request.tools.is_empty() {
            body["tools"] = tools(request.tools);
            body["tool_choice"] = json!("auto");
            body["parallel_tool_calls"] = json!(true);
        }
        let catalog = &self.catalog;
        let effort = catalog.thinking(model, self.thinking).effort;
        // Only a reasoning model may be asked for its reasoning: other models refuse `reasoning` and the include.
        if effort.is_some() || catalog.is_reasoning(model) {
            let mut reasoning = json!({"summary": "auto"});
            if let Some(effort) = effort {
                reasoning["effort"] = json!(effort.as_str());
            }
            body["reasoning"] = reasoning;
            body["include"] = json!(["reasoning.encrypted_content"]);
        }
        if let Some(max) = request.max_tokens.or(self.max_tokens) {
            body["max_output_tokens"] = json!(max);
        }
        body
    }

    /// The body's bytes, with each message's stored items reused and the others encoded now, written once.
    pub(super) fn body_bytes(&self, request: &PreparedRequest<'_>) -> Result<Bytes, ProviderError> {
        let skeleton = self.skeleton(request, wire::messages_slot());
        let (prefix, suffix) = wire::split_skeleton(&skeleton)?;
        let mut head = prefix.clone();
        head.push(b'[');
        wire::grow_or_write(
            &self.last,
            &head,
            request,
            |i| request.stored_items(i),
            &suffix,
            || Self::write_whole(request, &prefix, suffix.clone()),
        )
    }

    /// The whole body, each message's stored items reused and the others encoded now, written once.
    fn write_whole(request: &PreparedRequest<'_>, prefix: &[u8], suffix: Vec<u8>) -> Result<Vec<u8>, ProviderError> {
        let stored: usize = (0..request.messages.len())
            .filter_map(|i| request.stored_items(i))
            .flat_map(|items| items.iter().map(|item| item.len() + 1))
            .sum();
        let mut body = BodyWriter::from_parts(prefix, suffix, stored + 64);
        for (i, message) in request.messages.iter().enumerate() {
            match request.stored_items(i) {
                Some(items) => items.iter().for_each(|item| body.push(item)),
                None => {
                    for item in message_items(message) {
                        body.push(&wire::to_bytes(&item)?);
                    }
                }
            }
        }
        Ok(body.finish_vec())
    }
}

/// One message's wire form: its input items.
pub(crate) fn encode(message: &Message) -> Result<Encoded, ProviderError> {
    let items = message_items(message)
        .iter()
        .map(wire::to_bytes)
        .collect::<Result<_, _>>()?;
    Ok(Encoded::new(Form::Responses { items }))
}

impl WireFormat for ResponsesProvider {
    const PROVIDER: &'static str = "openai";
    type Stream = ResponsesStream;

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

/// Function tools in the Responses shape: flat, not nested under `function`. Not strict: tern's schemas (and MCP
/// servers') do not meet strict mode's rules.
fn tools(definitions: &[ToolDefinition]) -> Value {
    definitions
        .iter()
        .map(|d| {
            json!({"type": "function", "name": d.name, "description": d.description, "parameters": d.parameters,
                "strict": false})
        })
        .collect()
}

fn image_part(image: &Image) -> Value {
    json!({"type": "input_image", "image_url": format!("data:{};base64,{}", image.media_type, image.data_base64)})
}

/// One message as input items. An assistant message gives its carried reasoning items first, then its text, then
/// its function calls; a tool result gives its `function_call_output`, and the images a tool returned follow it as a
/// user message (an output carries text).
pub(crate) fn message_items(message: &Message) -> Vec<Value> {
    match message {
        Message::User { content, images } => {
            let mut parts: Vec<Value> = Vec::new();
            if !content.is_empty() {
                parts.push(json!({"type": "input_text", "text": content}));
            }
            parts.extend(images.iter().map(image_part));
            if parts.is_empty() {
                return Vec::new();
            }
            vec![json!({"type": "message", "role": "user", "content": parts})]
        }
        Message::Assistant {
            content,
            reasoning,
            tool_calls,
        } => {
            let mut items: Vec<Value> = reasoning
                .iter()
                .flat_map(|r| r.blocks.iter())
                .filter_map(|block| match block {
                    ReasoningBlock::ResponsesReasoning {
                        summary,
                        encrypted_content: Some(encrypted),
                        ..
                    } => {
                        let summary: Vec<Value> = summary
                            .iter()
                            .map(|text| json!({"type": "summary_text", "text": text}))
                            .collect();
                        Some(json!({"type": "reasoning", "summary": summary, "encrypted_content": encrypted}))
                    }
                    _ => None,
                })
                .collect();
            if !content.trim().is_empty() {
                items.push(json!({"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": content}]}));
            }
            items.extend(tool_calls.iter().map(|call| {
                json!({"type": "function_call", "call_id": call.id, "name": call.name,
                    "arguments": arguments_text(&call.arguments)})
            }));
            items
        }
        Message::Tool {
            call_id,
            name,
            content,
            images,
            ..
        } => {
            let mut items = vec![json!({"type": "function_call_output", "call_id": call_id, "output": content})];
            if !images.is_empty() {
                let mut parts = vec![json!({"type": "input_text",
                    "text": format!("Image(s) returned by {name} ({call_id}):")})];
                parts.extend(images.iter().map(image_part));
                items.push(json!({"type": "message", "role": "user", "content": parts}));
            }
            items
        }
    }
}

/// Arguments travel as a JSON string; text that never was valid JSON goes as `{}` (the tool result already told the
/// model what was wrong with it).
fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::String(raw) if serde_json::from_str::<Value>(raw).is_ok() => raw.clone(),
        Value::String(_) | Value::Null => "{}".to_string(),
        other => other.to_string(),
    }
}

/// One output item being assembled, by its `output_index`.
#[derive(Debug)]
enum Item {
    Message {
        /// Whether its text arrived as deltas (else the final item's text is taken).
        streamed: bool,
    },
    Reasoning {
        id: String,
        summary: Vec<String>,
        encrypted_content: Option<String>,
    },
    Call {
        call_id: String,
        name: String,
        arguments: String,
        announced: bool,
    },
    Other,
}

/// Assembles one streamed response.
#[derive(Debug, Default)]
pub(crate) struct ResponsesStream {
    items: Vec<(u64, Item)>,
    content: String,
    reasoning: String,
    /// Calls announced with `ToolCallStarted` so far.
    announced: usize,
    usage: Usage,
    /// "completed" or "incomplete", once the response ended.
    status: Option<String>,
    incomplete_reason: Option<String>,
    seen_response: bool,
}

fn text_of<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

impl ResponsesStream {
    fn item_mut(&mut self, index: u64) -> Option<&mut Item> {
        self.items
            .iter_mut()
            .rev()
            .find(|(i, _)| *i == index)
            .map(|(_, item)| item)
    }

    fn push_text(&mut self, text: &str, events: &mut Outbox<'_>) -> Result<(), ProviderError> {
        if !text.is_empty() {
            caps::append(&mut self.content, text, caps::Part::Answer)?;
            events.text(text);
        }
        Ok(())
    }

    fn push_reasoning(&mut self, text: &str, events: &mut Outbox<'_>) -> Result<(), ProviderError> {
        if !text.is_empty() {
            caps::append(&mut self.reasoning, text, caps::Part::Reasoning)?;
            events.reasoning(text);
        }
        Ok(())
    }

    /// The arguments of every call so far, for the cap on them all.
    fn all_arguments(&self) -> usize {
        self.items
            .iter()
            .map(|(_, item)| match item {
                Item::Call { arguments, .. } => arguments.len(),
                _ => 0,
            })
            .sum()
    }

    /// Tells the consumer a call began, once, as soon as its name is known.
    fn announce(&mut self, index: u64, events: &mut Outbox<'_>) {
        let ordinal = self.announced;
        if let Some(Item::Call {
            call_id,
            name,
            announced,
            ..
        }) = self.item_mut(index)
            && !*announced
            && !name.is_empty()
        {
            if call_id.is_empty() {
                *call_id = super::generated_call_id();
            }
            *announced = true;
            let started = ProviderEvent::ToolCallStarted {
                index: ordinal,
                id: call_id.clone(),
                name: name.clone(),
            };
            self.announced += 1;
            events.push(started);
        }
    }

    /// An item as `output_item.added` (possibly partial) or `output_item.done` (final) gives it.
    fn on_item(&mut self, index: u64, item: &Value, done: bool, events: &mut Outbox<'_>) -> Result<(), ProviderError> {
        let new = match text_of(item, "type") {
            "function_call" => Item::Call {
                call_id: text_of(item, "call_id").to_string(),
                name: text_of(item, "name").to_string(),
                arguments: text_of(item, "arguments").to_string(),
                announced: false,
            },
            "reasoning" => Item::Reasoning {
                id: text_of(item, "id").to_string(),
                summary: item
                    .get("summary")
                    .and_then(Value::as_array)
                    .map(|parts| parts.iter().map(|p| text_of(p, "text").to_string()).collect())
                    .unwrap_or_default(),
                encrypted_content: item
                    .get("encrypted_content")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            },
            "message" => Item::Message { streamed: false },
            other => {
                tracing::debug!(kind = other, "ignoring an output item");
                Item::Other
            }
        };
        if let Item::Call { arguments, .. } = &new {
            self.check_whole_arguments(index, arguments.len())?;
        }
        // A message whose text never came as deltas (some servers send only the final item) gives it whole.
        let whole_text = || -> String {
            item.get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|part| text_of(part, "type") == "output_text")
                .map(|part| text_of(part, "text"))
                .collect()
        };
        let mut late_text = None;
        match (self.item_mut(index), new) {
            (None, Item::Message { .. }) => {
                if done {
                    late_text = Some(whole_text());
                }
                self.items.push((index, Item::Message { streamed: done }));
            }
            (None, new) => self.items.push((index, new)),
            (Some(Item::Message { streamed }), Item::Message { .. }) => {
                if done && !*streamed {
                    *streamed = true;
                    late_text = Some(whole_text());
                }
            }
            (Some(Item::Call { arguments, .. }), Item::Call { arguments: whole, .. }) => {
                // The final item's arguments are the whole text; the deltas were only a preview.
                if done && !whole.is_empty() {
                    *arguments = whole;
                }
            }
            (Some(slot), new) => *slot = new,
        }
        if let Some(text) = late_text {
            self.push_text(&text, events)?;
        }
        self.announce(index, events);
        Ok(())
    }

    /// Whether a call's arguments, arriving whole and replacing what the deltas built, fit both caps.
    fn check_whole_arguments(&mut self, index: u64, whole: usize) -> Result<(), ProviderError> {
        let current = match self.item_mut(index) {
            Some(Item::Call { arguments, .. }) => arguments.len(),
            _ => 0,
        };
        caps::fits(caps::Part::CallArguments, 0, whole)?;
        caps::fits(
            caps::Part::AllArguments,
            self.all_arguments().saturating_sub(current),
            whole,
        )
    }

    fn update_usage(&mut self, usage: &Value) {
        let number = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
        // `input_tokens` counts the whole prompt, cached part included, as tern's `Usage` does.
        self.usage = Usage {
            input_tokens: number("/input_tokens"),
            output_tokens: number("/output_tokens"),
            cache_read_tokens: number("/input_tokens_details/cached_tokens"),
            cache_write_tokens: 0,
        };
    }
}

/// The error an `error` event or a failed response carries.
fn api_error(error: &Value) -> ProviderError {
    let kind = error
        .get("code")
        .and_then(Value::as_str)
        .or_else(|| error.get("type").and_then(Value::as_str))
        .unwrap_or("error");
    let message = error.get("message").and_then(Value::as_str).unwrap_or("unknown error");
    ProviderError::Api {
        kind: kind.to_string(),
        message: message.to_string(),
    }
}

impl StreamHandler for ResponsesStream {
    fn on_event(&mut self, event: SseEvent, events: &mut Outbox<'_>) -> Result<bool, ProviderError> {
        let data: Value = match serde_json::from_str(&event.data) {
            Ok(data) => data,
            Err(e) => {
                tracing::warn!(error = %e, data = %super::sse_excerpt(&event.data), "skipping an unreadable event");
                return Ok(false);
            }
        };
        let kind = data.get("type").and_then(Value::as_str).unwrap_or(&event.event);
        self.seen_response |= kind.starts_with("response.");
        let index = data.get("output_index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "response.output_item.added" | "response.output_item.done" => {
                if let Some(item) = data.get("item") {
                    self.on_item(index, item, kind.ends_with(".done"), events)?;
                }
            }
            "response.output_text.delta" => {
                if let Some(Item::Message { streamed }) = self.item_mut(index) {
                    *streamed = true;
                }
                self.push_text(text_of(&data, "delta"), events)?;
            }
            // Summary parts are shown as one text, a paragraph each.
            "response.reasoning_summary_part.added" if !self.reasoning.is_empty() => {
                self.push_reasoning("\n\n", events)?;
            }
            // Summaries from OpenAI's models; the full reasoning text from open models served this way.
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                self.push_reasoning(text_of(&data, "delta"), events)?;
            }
            "response.function_call_arguments.delta" => {
                let delta = text_of(&data, "delta");
                caps::fits(caps::Part::AllArguments, self.all_arguments(), delta.len())?;
                if let Some(Item::Call { arguments, .. }) = self.item_mut(index) {
                    caps::append(arguments, delta, caps::Part::CallArguments)?;
                }
            }
            "response.function_call_arguments.done" => {
                let whole = text_of(&data, "arguments").to_string();
                self.check_whole_arguments(index, whole.len())?;
                if let Some(Item::Call { arguments, .. }) = self.item_mut(index)
                    && !whole.is_empty()
                {
                    *arguments = whole;
                }
            }
            "response.completed" | "response.incomplete" => {
                let response = data.get("response").unwrap_or(&Value::Null);
                if let Some(usage) = response.get("usage").filter(|u| u.is_object()) {
                    self.update_usage(usage);
                }
                self.incomplete_reason = response
                    .pointer("/incomplete_details/reason")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                self.status = Some(kind.trim_start_matches("response.").to_string());
                return Ok(true);
            }
            "response.failed" => {
                let error = data.pointer("/response/error").unwrap_or(&Value::Null);
                return Err(api_error(error));
            }
            "error" => return Err(api_error(data.get("error").unwrap_or(&data))),
            // response.created, in_progress, content_part.*, output_text.done, and events added later.
            _ => {}
        }
        Ok(false)
    }

    fn is_complete(&self) -> bool {
        self.status.is_some()
    }

    fn has_message(&self) -> bool {
        self.seen_response
    }

    fn has_output(&self) -> bool {
        !self.content.is_empty() || !self.reasoning.is_empty() || self.announced > 0
    }

    fn finish(self) -> Completion {
        let mut tool_calls = Vec::new();
        let mut blocks = Vec::new();
        for (_, item) in self.items {
            match item {
                Item::Call {
                    call_id,
                    name,
                    arguments,
                    ..
                } => {
                    if name.is_empty() {
                        tracing::warn!(%call_id, "dropping a function call with no name");
                        continue;
                    }
                    let id = if call_id.is_empty() {
                        super::generated_call_id()
                    } else {
                        call_id
                    };
                    tool_calls.push(ToolCall {
                        id,
                        name,
                        arguments: super::parse_arguments(&arguments),
                    });
                }
                Item::Reasoning {
                    id,
                    summary,
                    encrypted_content,
                } => blocks.push(ReasoningBlock::ResponsesReasoning {
                    id,
                    summary,
                    encrypted_content,
                }),
                Item::Message { .. } | Item::Other => {}
            }
        }
        let finish_reason = match self.incomplete_reason.as_deref() {
            Some("max_output_tokens") => FinishReason::Length,
            Some("content_filter") => FinishReason::ContentFilter,
            Some(other) => FinishReason::Other(other.to_string()),
            None if !tool_calls.is_empty() => FinishReason::ToolCalls,
            None => FinishReason::Stop,
        };
        Completion {
            content: self.content,
            reasoning: (!self.reasoning.is_empty() || !blocks.is_empty()).then_some(Reasoning {
                text: self.reasoning,
                signature: None,
                blocks,
            }),
            tool_calls,
            finish_reason,
            usage: self.usage,
        }
    }
}

#[cfg(test)]
mod tests;
