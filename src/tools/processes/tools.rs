//! The model's tools on live processes. Reading output and stopping a process change nothing the model could not
//! change by a command the gate already let run, so they are read-only and run unasked; input to a process may make
//! a shell or REPL do anything, so it says so (`Effects::input`) and the gate decides.

use async_trait::async_trait;
use serde_json::{Value, json};
use std::time::Duration;

use super::keys::{KEY_NAMES, key_bytes};
use super::table::{Live, ProcessTable, describe_end};
use super::{BY_MODEL, READ_CHARS, screen};
use crate::effects::{self, ProcessInput};
use crate::{ClaudeTool, Effects, Tool, ToolContext, ToolError};
use tern_protocol::process::ProcessEnd;
use tern_protocol::{ToolKind, ToolOutput};

/// The longest a call may wait for output.
const MAX_WAIT_SECS: f64 = 30.0;
/// How long `process_input` waits for what follows the input, unless told.
const INPUT_WAIT: Duration = Duration::from_millis(1000);

/// New output of `live` for the model (escape codes removed, progress lines collapsed, its end kept when long) and
/// how it ended, if it did. Reading the end tells the model of it: no note follows.
pub(super) fn read(table: &ProcessTable, live: &Live) -> (String, Option<ProcessEnd>) {
    let end = live.end();
    let unread = live.read_new();
    let mut text = String::new();
    if unread.dropped > 0 {
        text.push_str(&format!(
            "[{} bytes of earlier output were dropped before they were read]\n",
            unread.dropped
        ));
    }
    let shown = screen::for_model(&unread.bytes);
    let count = shown.chars().count();
    if count > READ_CHARS {
        let cut: String = shown.chars().skip(count - READ_CHARS).collect();
        text.push_str(&format!("[… {} characters before this]\n", count - READ_CHARS));
        text.push_str(&cut);
    } else if shown.trim().is_empty() {
        text.push_str("(no new output)");
    } else {
        text.push_str(&shown);
    }
    if !text.ends_with('\n') {
        text.push('\n');
    }
    if end.is_some() {
        table.told_of_exit(&live.info.id);
    }
    (text, end)
}

fn id_arg(args: &Value) -> Result<&str, ToolError> {
    match args.get("id") {
        Some(Value::String(id)) if !id.trim().is_empty() => Ok(id.trim()),
        _ => Err(ToolError::Invalid(
            "missing required parameter 'id' (a process id such as p1)".into(),
        )),
    }
}

fn wait_arg(args: &Value, default: Duration) -> Result<Duration, ToolError> {
    match args.get("wait") {
        None | Some(Value::Null) => Ok(default),
        Some(v) => match v.as_f64() {
            Some(secs) if (0.0..=MAX_WAIT_SECS).contains(&secs) => Ok(Duration::from_secs_f64(secs)),
            _ => Err(ToolError::Invalid(format!(
                "wait must be a number of seconds from 0 to {MAX_WAIT_SECS}, got {v}"
            ))),
        },
    }
}

fn unknown(table: &ProcessTable, id: &str) -> ToolError {
    let known: Vec<String> = table.list().into_iter().map(|p| p.id).collect();
    ToolError::Invalid(if known.is_empty() {
        format!("there is no process {id}: none was started in this conversation")
    } else {
        format!("there is no process {id}; there are {}", known.join(", "))
    })
}

/// The state line after a read.
fn state_line(id: &str, end: Option<&ProcessEnd>) -> String {
    match end {
        Some(end) => format!("[Process {id} {}.]", describe_end(end)),
        None => format!("[Process {id} is still running.]"),
    }
}

pub struct ProcessOutputTool {
    table: ProcessTable,
}

impl ProcessOutputTool {
    pub fn new(table: ProcessTable) -> Self {
        Self { table }
    }

    fn listing(&self) -> ToolOutput {
        let all = self.table.list();
        if all.is_empty() {
            return ToolOutput::text("No process was started in this conversation.");
        }
        let lines: Vec<String> = all
            .iter()
            .map(|p| {
                let state = p.end.as_ref().map_or_else(|| "running".to_string(), describe_end);
                format!("{}: {state}: {}", p.id, tern_text::one_line(&p.command))
            })
            .collect();
        ToolOutput::text(lines.join("\n"))
    }
}

#[async_trait]
impl Tool for ProcessOutputTool {
    fn name(&self) -> &str {
        "process_output"
    }

    fn description(&self) -> &str {
        "Read what a live process (started by exec with `background: true`) printed since the last read, with escape \
         codes removed and progress lines collapsed to their last state, and whether it still runs. `wait` waits up \
         to that many seconds for new output or its exit (use it to poll a server until it listens). Without `id`: \
         the list of processes and their states."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "The process id exec returned (p1, p2, …)."},
                "wait": {
                    "type": "number", "minimum": 0, "maximum": MAX_WAIT_SECS,
                    "description": "Seconds to wait for new output or the exit when there is none yet (default 0)."
                }
            },
            "additionalProperties": false
        })
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    fn read_only(&self) -> bool {
        true
    }

    fn stable_result(&self) -> bool {
        false
    }

    fn claude(&self) -> Option<ClaudeTool> {
        Some(ClaudeTool::BashOutput)
    }

    async fn execute(&self, args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if matches!(args.get("id"), None | Some(Value::Null)) {
            return Ok(self.listing());
        }
        let id = id_arg(&args)?;
        let wait = wait_arg(&args, Duration::ZERO)?;
        let live = self.table.get(id).ok_or_else(|| unknown(&self.table, id))?;
        if !wait.is_zero() {
            live.wait_for_news(wait).await;
        }
        let (mut text, end) = read(&self.table, &live);
        text.push_str(&state_line(id, end.as_ref()));
        Ok(ToolOutput::text(text))
    }
}

pub struct ProcessInputTool {
    table: ProcessTable,
}

impl ProcessInputTool {
    pub fn new(table: ProcessTable) -> Self {
        Self { table }
    }
}

/// The bytes a call sends: its text, then its keys in order.
fn input_bytes(args: &Value) -> Result<Vec<u8>, ToolError> {
    let mut bytes = Vec::new();
    match args.get("text") {
        None | Some(Value::Null) => {}
        Some(Value::String(text)) => bytes.extend_from_slice(text.as_bytes()),
        Some(other) => return Err(ToolError::Invalid(format!("text must be a string, got {other}"))),
    }
    let keys = match args.get("keys") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(keys)) => keys.clone(),
        Some(Value::String(key)) => vec![Value::String(key.clone())],
        Some(other) => {
            return Err(ToolError::Invalid(format!(
                "keys must be a list of key names, got {other}"
            )));
        }
    };
    for key in keys {
        let name = key.as_str().unwrap_or_default();
        let Some(sent) = key_bytes(name) else {
            return Err(ToolError::Invalid(format!(
                "unknown key {key}; known keys: {KEY_NAMES}"
            )));
        };
        bytes.extend(sent);
    }
    if bytes.is_empty() {
        return Err(ToolError::Invalid(
            "nothing to send: give `text`, `keys` or both".into(),
        ));
    }
    Ok(bytes)
}

#[async_trait]
impl Tool for ProcessInputTool {
    fn name(&self) -> &str {
        "process_input"
    }

    fn description(&self) -> &str {
        "Type into a live process (started by exec with `background: true`): `text` as it is, then `keys` in order \
         (Enter, Tab, Esc, Backspace, Up, Down, Left, Right, Home, End, PageUp, PageDown, Delete, Ctrl+C, Ctrl+D, \
         Ctrl+Z, any Ctrl+letter). A line needs Enter at its end. Returns the output that followed within `wait` \
         seconds (default 1)."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "The process id exec returned (p1, p2, …)."},
                "text": {"type": "string", "description": "Text to type, as it is."},
                "keys": {
                    "type": "array", "items": {"type": "string"},
                    "description": "Keys to press after the text, in order: [\"Enter\"], [\"Ctrl+C\"]."
                },
                "wait": {
                    "type": "number", "minimum": 0, "maximum": MAX_WAIT_SECS,
                    "description": "Seconds to wait for the output that follows (default 1)."
                }
            },
            "required": ["id"],
            "additionalProperties": false
        })
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Command
    }

    fn read_only(&self) -> bool {
        false
    }

    fn exclusive(&self) -> bool {
        true
    }

    fn effects(&self, args: &Value) -> Effects {
        let id = effects::text(args, "id").unwrap_or_default().trim().to_string();
        let (command, unsandboxed) = self.table.describe(&id).unwrap_or_default();
        let bytes = input_bytes(args).unwrap_or_default();
        Effects {
            input: Some(ProcessInput {
                process: id,
                command,
                unsandboxed,
                data: String::from_utf8_lossy(&bytes).into_owned(),
            }),
            ..Effects::default()
        }
    }

    async fn execute(&self, args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let id = id_arg(&args)?;
        let bytes = input_bytes(&args)?;
        let wait = wait_arg(&args, INPUT_WAIT)?;
        let live = self.table.get(id).ok_or_else(|| unknown(&self.table, id))?;
        // What came before the input is not its answer: it is read first, and shown apart.
        let (before, _) = read(&self.table, &live);
        if let Err(why) = live.write(&bytes).await {
            return Ok(ToolOutput::error(format!("Error: {why}.")));
        }
        if !wait.is_zero() {
            live.wait_for_news(wait).await;
            // A program answers in pieces: a moment more for the rest of its reply.
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        let (after, end) = read(&self.table, &live);
        let mut text = format!("Sent {} bytes to {id}.\n", bytes.len());
        if before.trim() != "(no new output)" {
            text.push_str("Output before the input:\n");
            text.push_str(&before);
            text.push_str("Output after it:\n");
        }
        text.push_str(&after);
        text.push_str(&state_line(id, end.as_ref()));
        Ok(ToolOutput::text(text))
    }
}

pub struct ProcessStopTool {
    table: ProcessTable,
}

impl ProcessStopTool {
    pub fn new(table: ProcessTable) -> Self {
        Self { table }
    }
}

#[async_trait]
impl Tool for ProcessStopTool {
    fn name(&self) -> &str {
        "process_stop"
    }

    fn description(&self) -> &str {
        "Stop a live process (started by exec with `background: true`) and everything it started: SIGTERM, then \
         SIGKILL after half a second. Returns its last output and how it ended."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "The process id exec returned (p1, p2, …)."}
            },
            "required": ["id"],
            "additionalProperties": false
        })
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Command
    }

    fn effects(&self, args: &Value) -> Effects {
        Effects {
            stops: Some(effects::text(args, "id").unwrap_or_default().trim().to_string()),
            ..Effects::default()
        }
    }

    fn claude(&self) -> Option<ClaudeTool> {
        Some(ClaudeTool::KillShell)
    }

    async fn execute(&self, args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let id = id_arg(&args)?;
        let live = self.table.get(id).ok_or_else(|| unknown(&self.table, id))?;
        let was_running = live.end().is_none();
        self.table.stop(id, BY_MODEL).await;
        let (mut text, end) = read(&self.table, &live);
        if !was_running {
            text.push_str("[It had already ended.]\n");
        }
        text.push_str(&state_line(id, end.as_ref()));
        Ok(ToolOutput::text(text))
    }
}
