//! Claude Code's `--output-format stream-json`, for the tools that read it (CI actions, SDK wrappers): a `system`
//! line (`subtype: "init"`) when the session starts, an `assistant` line for each answer and each tool call
//! (`tool_use`), a `user` line for each tool result (`tool_result`), and a `result` line at the end with the answer,
//! the cost, the duration and the usage. tern's own events, which say more, are `--output-format events`.
//! Subagents' events are left out (their calls are the `spawn` call's business), as Claude Code leaves out
//! a subagent's own messages from the main stream.

use serde_json::{Value, json};

use tern_protocol::{Event, TurnEnd, Usage};

/// What the stream needs to remember between lines.
#[derive(Default)]
pub(super) struct ClaudeStream {
    model: String,
    /// Assistant messages so far (Claude Code's `num_turns`).
    turns: u64,
    next_message: u64,
}

impl ClaudeStream {
    /// The line for `event`, if it makes one.
    pub(super) fn line(&mut self, event: &Event, session_id: Option<&str>) -> Option<Value> {
        match event {
            Event::SessionStarted {
                model,
                mode,
                workspace,
                tools,
                ..
            } => {
                self.model = model.clone();
                Some(json!({
                    "type": "system", "subtype": "init", "session_id": session_id, "cwd": workspace,
                    "model": model, "tools": tools, "permissionMode": mode.claude_code_name(), "mcp_servers": [],
                }))
            }
            Event::AssistantMessage { text, .. } if !text.is_empty() => {
                Some(self.assistant(json!([{"type": "text", "text": text}]), session_id))
            }
            Event::ToolCallBegin {
                call_id, name, args, ..
            } => Some(self.assistant(
                json!([{"type": "tool_use", "id": call_id, "name": name, "input": args}]),
                session_id,
            )),
            Event::ToolCallEnd { call_id, output, .. } => Some(json!({
                "type": "user",
                "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id,
                    "content": output.text, "is_error": output.is_error}]},
                "parent_tool_use_id": null, "session_id": session_id,
            })),
            _ => None,
        }
    }

    fn assistant(&mut self, content: Value, session_id: Option<&str>) -> Value {
        self.turns += 1;
        self.next_message += 1;
        json!({
            "type": "assistant",
            "message": {"id": format!("msg_tern_{}", self.next_message), "type": "message", "role": "assistant",
                "model": self.model, "content": content, "stop_reason": null},
            "parent_tool_use_id": null, "session_id": session_id,
        })
    }

    /// The `result` line: how the run ended, its answer, cost, duration and usage.
    pub(super) fn result(&self, end: Option<&TurnEnd>, ended: &Ended<'_>) -> Value {
        let subtype = match end {
            Some(TurnEnd::Completed) => "success",
            Some(TurnEnd::IterationLimit) => "error_max_turns",
            _ => "error_during_execution",
        };
        let usage = ended.usage;
        json!({
            "type": "result", "subtype": subtype,
            "is_error": !matches!(end, Some(TurnEnd::Completed)),
            "duration_ms": ended.duration_ms, "duration_api_ms": ended.duration_ms,
            "num_turns": self.turns, "result": ended.answer, "session_id": ended.session_id,
            "total_cost_usd": ended.cost.unwrap_or(0.0),
            "usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                "cache_read_input_tokens": usage.cache_read_tokens,
                "cache_creation_input_tokens": usage.cache_write_tokens},
        })
    }
}

/// What the run came to, for the `result` line.
pub(super) struct Ended<'a> {
    pub answer: &'a str,
    pub session_id: Option<&'a str>,
    pub usage: &'a Usage,
    pub cost: Option<f64>,
    pub duration_ms: u64,
}
