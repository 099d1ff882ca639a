//! The Anthropic Messages stream turned into a `Completion`: `content_block_*` events assembled into text, tool
//! calls and thinking (each `thinking` block with its signature and each `redacted_thinking` block kept unchanged, to
//! be sent back in the tool-use loop), usage from `message_start` and `message_delta`, and `error` events.

use serde_json::Value;

use super::caps;
use super::transport::{Outbox, StreamHandler};
use super::{Completion, ProviderError, ProviderEvent};
use tern_http::sse::SseEvent;
use tern_protocol::{FinishReason, Reasoning, ReasoningBlock, ToolCall, Usage};

#[derive(Debug)]
enum Block {
    Text,
    Thinking {
        signature: String,
        text: String,
    },
    Redacted {
        data: String,
    },
    ToolUse {
        id: String,
        name: String,
        json: String,
        /// The input given whole in `content_block_start`, used when no deltas follow.
        initial: Value,
    },
    /// Blocks we do not use (server tools).
    Other,
}

/// Assembles one streamed answer.
#[derive(Debug, Default)]
pub(crate) struct AnthropicStream {
    /// Blocks by the stream's block index.
    blocks: Vec<(u64, Block)>,
    content: String,
    reasoning: String,
    usage: Usage,
    stop_reason: Option<String>,
    /// Whether an event of a message (its start, a content block, its delta) arrived.
    seen_message: bool,
}

impl AnthropicStream {
    fn block_mut(&mut self, index: u64) -> Option<&mut Block> {
        self.blocks.iter_mut().rev().find(|(i, _)| *i == index).map(|(_, b)| b)
    }

    fn on_block_start(&mut self, event: &Value, events: &mut Outbox<'_>) -> Result<(), ProviderError> {
        let index = event
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or(self.blocks.len() as u64);
        let block = event.get("content_block").cloned().unwrap_or(Value::Null);
        let text = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
        let block = match block.get("type").and_then(Value::as_str).unwrap_or_default() {
            "text" => {
                self.push_text(&text("text"), events)?;
                Block::Text
            }
            "thinking" => {
                // Thinking blocks are shown as one text, a paragraph each.
                if !self.reasoning.is_empty() {
                    self.push_reasoning("\n\n", events)?;
                }
                let initial = text("thinking");
                self.push_reasoning(&initial, events)?;
                Block::Thinking {
                    signature: text("signature"),
                    text: initial,
                }
            }
            "redacted_thinking" => Block::Redacted { data: text("data") },
            "tool_use" => {
                let (id, name) = (text("id"), text("name"));
                let id = if id.is_empty() { super::generated_call_id() } else { id };
                if !name.is_empty() {
                    let ordinal = self
                        .blocks
                        .iter()
                        .filter(|(_, b)| matches!(b, Block::ToolUse { name, .. } if !name.is_empty()))
                        .count();
                    events.push(ProviderEvent::ToolCallStarted {
                        index: ordinal,
                        id: id.clone(),
                        name: name.clone(),
                    });
                }
                Block::ToolUse {
                    id,
                    name,
                    json: String::new(),
                    initial: block.get("input").cloned().unwrap_or(Value::Null),
                }
            }
            other => {
                tracing::debug!(kind = other, "ignoring a content block");
                Block::Other
            }
        };
        self.blocks.push((index, block));
        Ok(())
    }

    /// The arguments of every tool call so far, for the cap on them all.
    fn all_arguments(&self) -> usize {
        self.blocks
            .iter()
            .map(|(_, block)| match block {
                Block::ToolUse { json, .. } => json.len(),
                _ => 0,
            })
            .sum()
    }

    fn on_block_delta(&mut self, event: &Value, events: &mut Outbox<'_>) -> Result<(), ProviderError> {
        let index = event.get("index").and_then(Value::as_u64).unwrap_or(0);
        let Some(delta) = event.get("delta") else {
            return Ok(());
        };
        let field = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or_default();
        match delta.get("type").and_then(Value::as_str).unwrap_or_default() {
            "text_delta" => self.push_text(field("text"), events)?,
            "thinking_delta" => {
                let piece = field("thinking");
                // The block's copy is as long as the reasoning text, which is capped below.
                caps::fits(caps::Part::Reasoning, self.reasoning.len(), piece.len())?;
                if let Some(Block::Thinking { text, .. }) = self.block_mut(index) {
                    text.push_str(piece);
                }
                self.push_reasoning(piece, events)?;
            }
            "signature_delta" => {
                if let Some(Block::Thinking { signature, .. }) = self.block_mut(index) {
                    // A signature is a few hundred bytes; one without end counts against the reasoning.
                    caps::append(signature, field("signature"), caps::Part::Reasoning)?;
                }
            }
            "input_json_delta" => {
                let piece = field("partial_json");
                caps::fits(caps::Part::AllArguments, self.all_arguments(), piece.len())?;
                if let Some(Block::ToolUse { json, .. }) = self.block_mut(index) {
                    caps::append(json, piece, caps::Part::CallArguments)?;
                }
            }
            other => tracing::debug!(kind = other, "ignoring a content delta"),
        }
        Ok(())
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

    /// Usage numbers arrive in `message_start` and (cumulatively) in `message_delta`; later values win.
    fn update_usage(&mut self, usage: &Value) {
        let number = |key: &str| usage.get(key).and_then(Value::as_u64);
        if let Some(n) = number("input_tokens") {
            self.usage.input_tokens = n;
        }
        if let Some(n) = number("output_tokens") {
            self.usage.output_tokens = n;
        }
        if let Some(n) = number("cache_read_input_tokens") {
            self.usage.cache_read_tokens = n;
        }
        if let Some(n) = number("cache_creation_input_tokens") {
            self.usage.cache_write_tokens = n;
        }
    }
}

impl StreamHandler for AnthropicStream {
    fn on_event(&mut self, event: SseEvent, events: &mut Outbox<'_>) -> Result<bool, ProviderError> {
        let data: Value = match serde_json::from_str(&event.data) {
            Ok(data) => data,
            Err(e) => {
                tracing::warn!(error = %e, data = %super::sse_excerpt(&event.data), "skipping an unreadable event");
                return Ok(false);
            }
        };
        // The payload's own type is authoritative; the `event:` line is a fallback for payloads without one.
        let kind = data.get("type").and_then(Value::as_str).unwrap_or(&event.event);
        self.seen_message |= matches!(
            kind,
            "message_start" | "content_block_start" | "content_block_delta" | "message_delta"
        );
        match kind {
            "message_start" => {
                if let Some(usage) = data.pointer("/message/usage") {
                    self.update_usage(usage);
                }
            }
            "content_block_start" => self.on_block_start(&data, events)?,
            "content_block_delta" => self.on_block_delta(&data, events)?,
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_string());
                }
                if let Some(usage) = data.get("usage") {
                    self.update_usage(usage);
                }
            }
            "message_stop" => return Ok(true),
            "error" => {
                let error = data.get("error").unwrap_or(&Value::Null);
                let field =
                    |key: &str, default: &str| error.get(key).and_then(Value::as_str).unwrap_or(default).to_string();
                return Err(ProviderError::Api {
                    kind: field("type", "error"),
                    message: field("message", "unknown error"),
                });
            }
            // ping, content_block_stop, and event types added after this was written.
            _ => {}
        }
        Ok(false)
    }

    fn is_complete(&self) -> bool {
        self.stop_reason.is_some()
    }

    fn has_message(&self) -> bool {
        self.seen_message
    }

    fn has_output(&self) -> bool {
        !self.content.is_empty()
            || !self.reasoning.is_empty()
            || self
                .blocks
                .iter()
                .any(|(_, b)| matches!(b, Block::ToolUse { .. } | Block::Redacted { .. }))
    }

    fn finish(self) -> Completion {
        let mut tool_calls = Vec::new();
        let mut kept = Vec::new();
        for (_, block) in self.blocks {
            let (id, name, json, initial) = match block {
                Block::ToolUse {
                    id,
                    name,
                    json,
                    initial,
                } => (id, name, json, initial),
                // Unsigned thinking (from a compatible server) cannot be sent back, so it is only shown.
                Block::Thinking { signature, text } if !signature.is_empty() => {
                    kept.push(ReasoningBlock::Thinking {
                        thinking: text,
                        signature,
                    });
                    continue;
                }
                Block::Redacted { data } => {
                    kept.push(ReasoningBlock::RedactedThinking { data });
                    continue;
                }
                Block::Text | Block::Thinking { .. } | Block::Other => continue,
            };
            if name.is_empty() {
                tracing::warn!(%id, "dropping a tool call with no name");
                continue;
            }
            let arguments = if json.trim().is_empty() && initial.is_object() {
                initial
            } else {
                super::parse_arguments(&json)
            };
            tool_calls.push(ToolCall { id, name, arguments });
        }
        let finish_reason = match self.stop_reason.as_deref() {
            Some("end_turn" | "stop_sequence") | None if !tool_calls.is_empty() => FinishReason::ToolCalls,
            Some("end_turn" | "stop_sequence") | None => FinishReason::Stop,
            Some("tool_use") => FinishReason::ToolCalls,
            Some("max_tokens") => FinishReason::Length,
            Some("refusal") => FinishReason::ContentFilter,
            Some(other) => FinishReason::Other(other.to_string()),
        };
        // Anthropic's input_tokens leaves out the cached part; ours counts the whole prompt.
        let usage = Usage {
            input_tokens: self.usage.input_tokens + self.usage.cache_read_tokens + self.usage.cache_write_tokens,
            ..self.usage
        };
        Completion {
            content: self.content,
            reasoning: (!self.reasoning.is_empty() || !kept.is_empty()).then_some(Reasoning {
                text: self.reasoning,
                signature: None,
                blocks: kept,
            }),
            tool_calls,
            finish_reason,
            usage,
        }
    }
}
