//! tern's events as ACP `session/update`s: the answer and the reasoning as chunks, tool calls with their results,
//! diffs and locations, the plan, the mode. Tool output and titles are cleaned of escape codes as on a terminal: an
//! editor shows them too.

use serde_json::{Value, json};
use tern_protocol::{ApprovalMode, Event, FileDiff, PlanStatus, ToolDetails, ToolKind, ToolOutput};

/// How much of a running call's live output an update carries (its end): ACP replaces a call's content with each
/// update, so each carries the output so far, cut to its tail.
const LIVE_OUTPUT: usize = 16 * 1024;

/// What a live session has streamed, so the end of a message is not sent twice.
#[derive(Default)]
pub(crate) struct Stream {
    /// Whether deltas of the current message were sent (its `AssistantMessage` then adds nothing).
    streamed: bool,
    /// The live output of the calls running, by call id.
    output: std::collections::HashMap<String, String>,
}

impl Stream {
    /// The updates one live event makes.
    pub(crate) fn live(&mut self, event: &Event) -> Vec<Value> {
        match event {
            Event::AssistantDelta { text } => {
                self.streamed = true;
                vec![chunk("agent_message_chunk", text)]
            }
            Event::ReasoningDelta { text } => {
                self.streamed = true;
                vec![chunk("agent_thought_chunk", text)]
            }
            Event::AssistantMessage { .. } if std::mem::take(&mut self.streamed) => Vec::new(),
            Event::ToolOutputDelta { call_id, chunk } => vec![self.output(call_id, chunk)],
            Event::ToolCallEnd { call_id, .. } => {
                self.output.remove(call_id);
                recorded(event)
            }
            Event::TurnStarted { .. } => Vec::new(),
            other => recorded(other),
        }
    }
}

impl Stream {
    /// A running call's output so far (its tail), cleaned.
    fn output(&mut self, call_id: &str, chunk: &str) -> Value {
        let output = self.output.entry(call_id.to_string()).or_default();
        output.push_str(chunk);
        if output.len() > 2 * LIVE_OUTPUT {
            let mut cut = output.len() - LIVE_OUTPUT;
            while !output.is_char_boundary(cut) {
                cut += 1;
            }
            output.drain(..cut);
        }
        let mut from = output.len().saturating_sub(LIVE_OUTPUT);
        while !output.is_char_boundary(from) {
            from += 1;
        }
        json!({
            "sessionUpdate": "tool_call_update",
            "toolCallId": call_id,
            "status": "in_progress",
            "content": [{"type": "content", "content": {"type": "text", "text": clean(&output[from..])}}],
        })
    }
}

/// The updates an event of a session's record makes when the session is loaded (its history replayed), and the
/// part of a live event's that is the same.
pub(crate) fn recorded(event: &Event) -> Vec<Value> {
    match event {
        Event::TurnStarted { text, .. } => vec![chunk("user_message_chunk", text)],
        Event::AssistantMessage { text, reasoning } => {
            let mut updates = Vec::new();
            if let Some(reasoning) = reasoning.as_deref().filter(|r| !r.is_empty()) {
                updates.push(chunk("agent_thought_chunk", reasoning));
            }
            if !text.is_empty() {
                updates.push(chunk("agent_message_chunk", text));
            }
            updates
        }
        Event::ToolCallBegin {
            call_id,
            name,
            kind,
            args,
        } => vec![tool_call(call_id, name, *kind, args)],
        Event::ToolCallEnd { call_id, output, .. } => vec![tool_call_end(call_id, output)],
        Event::PlanUpdated { items } => {
            let entries: Vec<Value> = items
                .iter()
                .map(|item| json!({"content": clean(&item.content), "priority": "medium", "status": plan_status(item.status)}))
                .collect();
            vec![json!({"sessionUpdate": "plan", "entries": entries})]
        }
        Event::ModeChanged { mode } => {
            vec![json!({"sessionUpdate": "current_mode_update", "currentModeId": mode_id(*mode)})]
        }
        Event::Error { message } => vec![chunk("agent_message_chunk", &format!("\n\nError: {message}\n"))],
        _ => Vec::new(),
    }
}

fn chunk(kind: &str, text: &str) -> Value {
    json!({"sessionUpdate": kind, "content": {"type": "text", "text": text}})
}

/// A tool call as it starts: its title (the tool and what it is about), kind, input and the paths it names.
pub(crate) fn tool_call(call_id: &str, name: &str, kind: ToolKind, args: &Value) -> Value {
    let args = tern_text::calls::call_arguments(args);
    let mut update = json!({
        "sessionUpdate": "tool_call",
        "toolCallId": call_id,
        "title": title(name, &args),
        "kind": tool_kind(kind),
        "status": "in_progress",
        "rawInput": args,
    });
    let paths = call_paths(&args);
    if !paths.is_empty() {
        update["locations"] = paths.into_iter().map(|path| json!({"path": path})).collect();
    }
    update
}

/// `read_file notes.txt`, `exec cargo test`: what the TUI's call line shows.
pub(crate) fn title(name: &str, args: &Value) -> String {
    let key = tern_text::calls::key_argument(args);
    let title = if key.is_empty() {
        name.to_string()
    } else {
        format!("{name} {key}")
    };
    clean(&title)
}

/// The paths a call names, for the editor to follow.
fn call_paths(args: &Value) -> Vec<String> {
    let mut paths: Vec<String> = args
        .get("path")
        .and_then(Value::as_str)
        .map(str::to_string)
        .into_iter()
        .collect();
    paths.extend(tern_text::calls::edit_paths(args));
    tern_text::calls::unique_paths(paths.iter().map(String::as_str))
}

/// A tool call's end: completed or failed, its output (cleaned), and its diffs or the lines it read.
fn tool_call_end(call_id: &str, output: &ToolOutput) -> Value {
    let mut content = vec![json!({"type": "content", "content": {"type": "text", "text": clean(&output.text)}})];
    let mut locations = Vec::new();
    match &output.details {
        ToolDetails::Diffs { diffs } => {
            content.extend(diffs.iter().map(diff));
            locations.extend(diffs.iter().map(|d| json!({"path": d.path})));
        }
        ToolDetails::Read { path, first_line, .. } => locations.push(json!({"path": path, "line": first_line})),
        _ => {}
    }
    let mut update = json!({
        "sessionUpdate": "tool_call_update",
        "toolCallId": call_id,
        "status": if output.is_error { "failed" } else { "completed" },
        "content": content,
    });
    if !locations.is_empty() {
        update["locations"] = Value::Array(locations);
    }
    update
}

/// One file's change as ACP's diff content (`oldText` absent for a new file).
pub(crate) fn diff(file: &FileDiff) -> Value {
    let mut diff = json!({"type": "diff", "path": file.path, "newText": file.new.as_deref().unwrap_or_default()});
    if let Some(old) = &file.old {
        diff["oldText"] = json!(old);
    }
    diff
}

pub(crate) fn tool_kind(kind: ToolKind) -> &'static str {
    match kind {
        ToolKind::Read => "read",
        ToolKind::Search | ToolKind::WebSearch => "search",
        ToolKind::Edit => "edit",
        ToolKind::Command => "execute",
        ToolKind::Fetch => "fetch",
        ToolKind::Plan => "think",
        ToolKind::Agent | ToolKind::Mcp | ToolKind::Other => "other",
    }
}

fn plan_status(status: PlanStatus) -> &'static str {
    status.as_str()
}

/// The ACP id of an approval mode: tern's own name (`auto-edit`).
pub(crate) fn mode_id(mode: ApprovalMode) -> String {
    mode.to_string()
}

/// The modes an editor may switch between, and the current one.
pub(crate) fn modes(current: ApprovalMode) -> Value {
    let available: Vec<Value> = ApprovalMode::ALL
        .iter()
        .map(|mode| json!({"id": mode_id(*mode), "name": mode_name(*mode), "description": mode_description(*mode)}))
        .collect();
    json!({"currentModeId": mode_id(current), "availableModes": available})
}

fn mode_name(mode: ApprovalMode) -> &'static str {
    match mode {
        ApprovalMode::ReadOnly => "Read only",
        ApprovalMode::Ask => "Ask",
        ApprovalMode::AutoEdit => "Auto edit",
        ApprovalMode::FullAuto => "Full auto",
    }
}

fn mode_description(mode: ApprovalMode) -> &'static str {
    match mode {
        ApprovalMode::ReadOnly => "Nothing that writes or runs",
        ApprovalMode::Ask => "Edits and commands ask",
        ApprovalMode::AutoEdit => "Edits inside the workspace apply; commands ask",
        ApprovalMode::FullAuto => "Nothing asks (writes outside the workspace still do; commands stay sandboxed)",
    }
}

fn clean(text: &str) -> String {
    tern_text::clean(text).into_owned()
}

#[cfg(test)]
mod tests;
