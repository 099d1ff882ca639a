//! The Anthropic Messages wire format: the request body (content blocks, strictly alternating roles, prompt-cache
//! breakpoints, extended thinking). The streamed answer is read in `anthropic_stream.rs`.
//!
//! Extended thinking follows <https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking>: the request
//! carries `"thinking": {"type": "enabled", "budget_tokens": N}` with N ≥ 1,024 and `max_tokens` above N; the
//! answer's `thinking` blocks (their text streamed as `thinking_delta`, then a `signature_delta`) and
//! `redacted_thinking` blocks are kept unchanged in the assistant message and sent back first in its content, because
//! "during tool use, you must pass thinking blocks back to the API for the last assistant message" and "the final
//! assistant message must start with a thinking block". tern never sends `temperature`, `top_p`, `top_k` or a forced
//! `tool_choice`, so the constraints thinking puts on them always hold.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};

use super::Thinking;
use super::anthropic_stream::AnthropicStream;
use super::reasoning::MIN_THINKING_BUDGET;
use super::transport::Transport;
use super::wire::{self, BodyWriter, Encoded, Form, Kept, PreparedRequest};
use super::{ProviderConfig, ProviderError, WireFormat};
use tern_protocol::ToolDefinition;
use tern_protocol::{Image, Message, Reasoning, ReasoningBlock};
#[cfg(test)]
use {
    super::{ChatRequest, ProviderEvent},
    tokio::sync::mpsc::UnboundedSender,
};

/// Anthropic requires an output limit.
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 8192;
const API_VERSION: &str = "2023-06-01";

pub(crate) struct AnthropicProvider {
    transport: Transport,
    model: String,
    max_tokens: Option<u32>,
    thinking: Thinking,
    /// What tern knows of models: how each may think, its output limit.
    catalog: std::sync::Arc<crate::models::Catalog>,
    /// The last request's body, to grow the next one from.
    pub(super) last: Mutex<Option<Kept>>,
}

impl AnthropicProvider {
    pub(crate) fn new(config: &ProviderConfig) -> Result<Self, ProviderError> {
        let mut auth = HeaderMap::new();
        auth.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(API_VERSION),
        );
        if let Some(key) = config.api_key.as_deref().map(str::trim).filter(|k| !k.is_empty()) {
            let mut value = HeaderValue::from_str(key)
                .map_err(|_| ProviderError::Config("the API key contains characters a header cannot hold".into()))?;
            value.set_sensitive(true);
            auth.insert(HeaderName::from_static("x-api-key"), value);
        }
        Ok(Self {
            transport: Transport::new(config, "/v1/messages", auth)?,
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
        let messages = Value::Array(messages(&request.messages));
        self.skeleton(&request.prepared(), messages)
    }

    /// The body around `messages` (the whole list, or `wire::messages_slot()` to splice encoded messages into).
    fn skeleton(&self, request: &PreparedRequest<'_>, messages: Value) -> Value {
        let model = if request.model.is_empty() {
            &self.model
        } else {
            request.model
        };
        let max_tokens = request.max_tokens.or(self.max_tokens).unwrap_or(DEFAULT_MAX_TOKENS);
        let catalog = &self.catalog;
        let budget = catalog
            .thinking(model, self.thinking)
            .budget
            .filter(|_| can_think(request.messages));
        let (max_tokens, budget) = thinking_limits(max_tokens, budget, catalog.max_output(model));
        let mut body = json!({
            "model": model,
            "max_tokens": max_tokens,
            "stream": true,
            "messages": messages,
        });
        if let Some(budget) = budget {
            body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
        }
        if !request.system.is_empty() {
            body["system"] = json!([{"type": "text", "text": request.system, "cache_control": ephemeral()}]);
        }
        if !request.tools.is_empty() {
            body["tools"] = self::tools(request.tools);
        }
        body
    }

    /// The body's bytes, with each message's stored wire form reused and the others encoded now, written once; in a
    /// growing conversation, the last body grown by what changed (`wire::Kept`). Merging, ordering and the cache
    /// breakpoint follow `messages` exactly.
    pub(super) fn body_bytes(&self, request: &PreparedRequest<'_>) -> Result<Bytes, ProviderError> {
        let skeleton = self.skeleton(request, wire::messages_slot());
        let (prefix, suffix) = wire::split_skeleton(&skeleton)?;
        let start = prefix.len() + 1;
        let mut kept = self.last.lock().ok().and_then(|mut last| last.take());
        // Growing lays out only the messages after the part that stays, so a step costs what it added. Messages
        // without a stored form (none, in a running session) are encoded for this request only.
        let grows_from = kept
            .as_ref()
            .filter(|k| k.holds_start_of(request, start))
            .map(|k| k.count);
        let fresh = fresh_forms(request, grows_from.unwrap_or(0))?;
        let grown = match (grows_from, kept.as_mut()) {
            (Some(_), Some(kept)) => Layout::grow(request, &fresh, kept, &prefix),
            _ => None,
        };
        let resumed = grown.is_some();
        let refreshed;
        let (layout, mut body, from) = match grown {
            Some((layout, out)) => {
                let from = out.len();
                (layout, BodyWriter::resume(out, suffix), from)
            }
            None => {
                let fresh = if grows_from.is_some_and(|k| k > 0) {
                    refreshed = fresh_forms(request, 0)?;
                    &refreshed
                } else {
                    &fresh
                };
                let layout = Layout::new(request, fresh, 0, "");
                let body = BodyWriter::from_parts(&prefix, suffix, layout.bytes());
                (layout, body, start)
            }
        };
        let end = layout.write(&mut body, from);
        let body = body.finish_vec();
        let Some(history) = request.history else {
            return Ok(Bytes::from(body));
        };
        let (count, role) = layout.kept_part(request.messages.len());
        // A grown body goes back where it was kept.
        let kept = match kept {
            Some(mut kept) if resumed => {
                match Arc::get_mut(&mut kept.body) {
                    Some(slot) => *slot = body,
                    None => kept.body = Arc::new(body),
                }
                kept.count = count;
                kept.end = end;
                kept.role = role;
                kept
            }
            _ => Kept {
                body: Arc::new(body),
                start,
                end,
                history,
                count,
                role,
            },
        };
        let bytes = kept.lend();
        if let Ok(mut last) = self.last.lock() {
            *last = Some(kept);
        }
        Ok(bytes)
    }
}

/// The forms of the request's messages from `from` on that have no stored form, encoded now.
fn fresh_forms(request: &PreparedRequest<'_>, from: usize) -> Result<Vec<(usize, Form)>, ProviderError> {
    (from..request.messages.len())
        .filter(|&i| request.stored(i, false).is_none())
        .map(|i| encode_form(&request.messages[i]).map(|form| (i, form)))
        .collect()
}

/// One message's form in a request: its index and its blocks.
struct Part<'a> {
    message: usize,
    role: &'static str,
    blocks: &'a [wire::Block],
}

/// How a request's forms become the body's messages: adjacent forms of one role are one message, user messages put
/// tool results first, and the cache breakpoint goes on the last block of the last user message. A layout covers the
/// messages from one on: all of them, or those after the part of the last body that stays.
struct Layout<'a> {
    /// The forms with blocks, in order.
    forms: Vec<Part<'a>>,
    /// The form each message of the body starts with.
    starts: Vec<usize>,
    /// The last user form: the breakpoint is on the last block of its message.
    breakpoint: Option<usize>,
    /// The messages before this one stay for the next request: the message with the breakpoint moves, and the
    /// next forms may join the last one.
    keep: usize,
    /// The role of the message before the first one laid out ("" when there is none).
    before: &'static str,
}

impl<'a> Layout<'a> {
    /// The layout of the request's messages from `first` on; `before` is the role of the body's message before them.
    fn new(request: &'a PreparedRequest<'a>, fresh: &'a [(usize, Form)], first: usize, before: &'static str) -> Self {
        let mut forms: Vec<Part<'a>> = Vec::with_capacity(request.messages.len() - first);
        let mut next_fresh = fresh.iter().skip_while(|(at, _)| *at < first).peekable();
        for i in first..request.messages.len() {
            let form = match next_fresh.next_if(|(at, _)| *at == i) {
                Some((_, form)) => Some(form),
                None => request.stored(i, false),
            };
            if let Some(Form::Anthropic { role, blocks }) = form
                && !blocks.is_empty()
            {
                forms.push(Part {
                    message: i,
                    role,
                    blocks,
                });
            }
        }
        let breakpoint = forms.iter().rposition(|f| f.role == "user");
        let starts: Vec<usize> = (0..forms.len())
            .filter(|&k| k == 0 || forms[k].role != forms[k - 1].role)
            .collect();
        let last = starts.len().saturating_sub(1);
        let keep = breakpoint
            .map(|b| starts.partition_point(|&s| s <= b) - 1)
            .unwrap_or(last)
            .min(last);
        Self {
            forms,
            starts,
            breakpoint,
            keep,
            before,
        }
    }

    /// The layout of the messages after the kept body's part that stays, and that body emptied past it, when this
    /// request can grow it: the body holds the request's first messages (`Kept::holds_start_of`, checked by the
    /// caller), the first form after them begins a message of its own, the breakpoint is after them, the body starts
    /// with `prefix`, and no request holds it any more.
    fn grow(
        request: &'a PreparedRequest<'a>,
        fresh: &'a [(usize, Form)],
        kept: &mut Kept,
        prefix: &[u8],
    ) -> Option<(Self, Vec<u8>)> {
        let layout = Self::new(request, fresh, kept.count, kept.role);
        let fits = layout.forms.first().is_some_and(|f| f.role != kept.role) && layout.breakpoint.is_some();
        let body = Arc::get_mut(&mut kept.body)?;
        if !fits || body.get(..prefix.len()) != Some(prefix) || body.get(prefix.len()) != Some(&b'[') {
            return None;
        }
        let mut out = std::mem::take(body);
        out.truncate(kept.end);
        Some((layout, out))
    }

    /// About how many bytes the messages take.
    fn bytes(&self) -> usize {
        let blocks: usize = self
            .forms
            .iter()
            .flat_map(|f| f.blocks.iter())
            .map(|b| b.bytes.len() + 1)
            .sum();
        blocks + self.forms.len() * 32
    }

    /// Writes the messages, the first at `body.len() == from`. Returns where the part that stays for the next
    /// request ends.
    fn write(&self, body: &mut BodyWriter, from: usize) -> usize {
        let forms = &self.forms;
        let mut end = from;
        let mut group: Vec<&wire::Block> = Vec::new();
        for (n, &first) in self.starts.iter().enumerate() {
            if n == self.keep {
                end = body.len();
            }
            let role = forms[first].role;
            let until = self.starts.get(n + 1).copied().unwrap_or(forms.len());
            group.clear();
            group.extend(forms[first..until].iter().flat_map(|f| f.blocks.iter()));
            if role == "user" {
                // A stable sort: tool results first, everything else after in its order.
                group.sort_by_key(|b| !b.tool_result);
            }
            let out = body.element();
            wire::open_role_message(out, role);
            out.push(b'[');
            let marked = self.breakpoint.is_some_and(|b| (first..until).contains(&b));
            for (k, block) in group.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                if marked && k + 1 == group.len() {
                    out.extend_from_slice(&with_cache_control(&block.bytes));
                } else {
                    out.extend_from_slice(&block.bytes);
                }
            }
            out.extend_from_slice(b"]}");
        }
        end
    }

    /// How many of the request's `messages` the part that stays covers, and the role of its last message.
    fn kept_part(&self, messages: usize) -> (usize, &'static str) {
        let covered = self.starts.get(self.keep).map_or(messages, |&k| self.forms[k].message);
        let role = match self.keep {
            0 => self.before,
            keep => self.forms[self.starts[keep] - 1].role,
        };
        (covered, role)
    }
}

/// The output limit and thinking budget of a request: the budget at least Anthropic's minimum, `max_tokens` raised
/// above it (by the answer's own limit) as the API requires, both within the model's output limit when the catalog
/// knows it. No thinking when the limit leaves no room for the minimum budget.
fn thinking_limits(max_tokens: u32, budget: Option<u32>, model_limit: Option<u64>) -> (u32, Option<u32>) {
    let Some(budget) = budget else {
        return (max_tokens, None);
    };
    let budget = budget.max(MIN_THINKING_BUDGET);
    let mut limit = if max_tokens > budget {
        max_tokens
    } else {
        budget.saturating_add(max_tokens)
    };
    if let Some(model_limit) = model_limit {
        limit = limit.min(u32::try_from(model_limit).unwrap_or(u32::MAX));
    }
    // The answer after the thinking keeps at least the minimum budget's worth of room.
    let budget = budget.min(limit.saturating_sub(MIN_THINKING_BUDGET));
    if budget < MIN_THINKING_BUDGET {
        return (max_tokens.min(limit.max(1)), None);
    }
    (limit, Some(budget))
}

/// Whether thinking may be enabled for a request on this conversation. A tool-use loop is one assistant turn with
/// one thinking configuration, and with thinking on the API requires the turn's first assistant message to start
/// with a thinking block (later ones in the loop may have none: without interleaved thinking the model thinks once
/// per turn). A turn begun without thinking (before it was configured, by another provider, or in an older session)
/// cannot get one, so it finishes without thinking and the next user turn has it again.
fn can_think(messages: &[Message]) -> bool {
    if !matches!(messages.last(), Some(Message::Tool { .. })) {
        return true;
    }
    // Back from the end: assistant messages separated by groups holding tool results belong to the current turn; a
    // group of user messages alone is where it began.
    let mut first = None;
    let mut results_after = false;
    for message in messages.iter().rev() {
        match message {
            Message::Tool { .. } => results_after = true,
            Message::User { .. } => {}
            Message::Assistant { .. } => {
                if first.is_some() && !results_after {
                    break;
                }
                first = Some(message);
                results_after = false;
            }
        }
    }
    match first {
        Some(Message::Assistant {
            reasoning: Some(reasoning),
            ..
        }) => {
            reasoning.blocks.iter().any(|b| {
                matches!(
                    b,
                    ReasoningBlock::Thinking { .. } | ReasoningBlock::RedactedThinking { .. }
                )
            }) || (reasoning.blocks.is_empty() && reasoning.signature.is_some())
        }
        _ => false,
    }
}

/// A serialised block object with `"cache_control"` added as its last key, as inserting it into the value does.
fn with_cache_control(block: &[u8]) -> Vec<u8> {
    const TAIL: &[u8] = br#","cache_control":{"type":"ephemeral"}}"#;
    let mut out = Vec::with_capacity(block.len() + TAIL.len());
    out.extend_from_slice(block.strip_suffix(b"}").unwrap_or(block));
    out.extend_from_slice(TAIL);
    out
}

/// One message's wire form.
pub(crate) fn encode(message: &Message) -> Result<Encoded, ProviderError> {
    encode_form(message).map(Encoded::new)
}

fn encode_form(message: &Message) -> Result<Form, ProviderError> {
    let (role, blocks) = message_blocks(message);
    let blocks = blocks
        .iter()
        .map(|b| {
            Ok(wire::Block {
                tool_result: is_tool_result(b),
                bytes: wire::to_bytes(b)?,
            })
        })
        .collect::<Result<_, ProviderError>>()?;
    Ok(Form::Anthropic { role, blocks })
}

fn is_tool_result(block: &Value) -> bool {
    block.get("type").and_then(Value::as_str) == Some("tool_result")
}

impl WireFormat for AnthropicProvider {
    const PROVIDER: &'static str = "anthropic";
    type Stream = AnthropicStream;

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

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// Tool definitions; a cache breakpoint on the last one caches the whole (stable, sorted) list.
fn tools(definitions: &[ToolDefinition]) -> Value {
    let mut list: Vec<Value> = definitions
        .iter()
        .map(|d| json!({"name": d.name, "description": d.description, "input_schema": d.parameters}))
        .collect();
    if let Some(last) = list.last_mut() {
        last["cache_control"] = ephemeral();
    }
    Value::Array(list)
}

fn image_block(image: &Image) -> Value {
    json!({
        "type": "image",
        "source": {"type": "base64", "media_type": image.media_type, "data": image.data_base64},
    })
}

/// Text blocks must not be empty (nor whitespace only), so those are left out.
fn text_block(text: &str) -> Option<Value> {
    (!text.trim().is_empty()).then(|| json!({"type": "text", "text": text}))
}

/// Our conversation as Anthropic messages. Roles must alternate, so adjacent messages of one role (tool results,
/// a user note after them) merge into one message, tool results first as the API requires. Empty messages are left
/// out. The last user message carries a cache breakpoint so the next request reads the conversation from the cache.
#[cfg(test)]
pub(crate) fn messages(conversation: &[Message]) -> Vec<Value> {
    let mut merged: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in conversation {
        let (role, blocks) = message_blocks(message);
        if blocks.is_empty() {
            continue;
        }
        match merged.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => merged.push((role, blocks)),
        }
    }
    for (role, blocks) in &mut merged {
        if *role == "user" {
            // A stable sort: tool results first, everything else after in its order.
            blocks.sort_by_key(|b| !is_tool_result(b));
        }
    }
    if let Some((_, blocks)) = merged.iter_mut().rev().find(|(role, _)| *role == "user")
        && let Some(last) = blocks.last_mut()
    {
        last["cache_control"] = ephemeral();
    }
    merged
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

/// One message's role and content blocks (empty text left out).
fn message_blocks(message: &Message) -> (&'static str, Vec<Value>) {
    match message {
        Message::User { content, images } => {
            let mut blocks: Vec<Value> = images.iter().map(image_block).collect();
            blocks.extend(text_block(content));
            ("user", blocks)
        }
        Message::Assistant {
            content,
            reasoning,
            tool_calls,
        } => {
            let mut blocks = Vec::new();
            // Thinking goes back first and unchanged. Only signed thinking can be sent back; unsigned reasoning came
            // from elsewhere (a local model, another API) and is dropped.
            match reasoning {
                Some(Reasoning { blocks: kept, .. }) if !kept.is_empty() => {
                    blocks.extend(kept.iter().filter_map(|block| match block {
                        ReasoningBlock::Thinking { thinking, signature } => {
                            Some(json!({"type": "thinking", "thinking": thinking, "signature": signature}))
                        }
                        ReasoningBlock::RedactedThinking { data } => {
                            Some(json!({"type": "redacted_thinking", "data": data}))
                        }
                        ReasoningBlock::ResponsesReasoning { .. } => None,
                    }));
                }
                Some(Reasoning {
                    text,
                    signature: Some(signature),
                    ..
                }) => blocks.push(json!({"type": "thinking", "thinking": text, "signature": signature})),
                _ => {}
            }
            blocks.extend(text_block(content));
            blocks.extend(tool_calls.iter().map(|call| {
                json!({"type": "tool_use", "id": call.id, "name": call.name, "input": tool_input(&call.arguments)})
            }));
            ("assistant", blocks)
        }
        Message::Tool {
            call_id,
            content,
            is_error,
            images,
            ..
        } => {
            let mut result = json!({"type": "tool_result", "tool_use_id": call_id});
            if images.is_empty() {
                if !content.is_empty() {
                    result["content"] = json!(content);
                }
            } else {
                let mut parts: Vec<Value> = text_block(content).into_iter().collect();
                parts.extend(images.iter().map(image_block));
                result["content"] = Value::Array(parts);
            }
            if *is_error {
                result["is_error"] = json!(true);
            }
            ("user", vec![result])
        }
    }
}

/// `tool_use.input` must be an object. Arguments that never parsed are sent as `{}`; the tool result already told
/// the model what was wrong with them.
fn tool_input(arguments: &Value) -> Value {
    match arguments {
        Value::Object(_) => arguments.clone(),
        Value::String(raw) => match serde_json::from_str::<Value>(raw) {
            Ok(value @ Value::Object(_)) => value,
            _ => Value::Object(Map::new()),
        },
        _ => Value::Object(Map::new()),
    }
}

#[cfg(test)]
mod tests;
