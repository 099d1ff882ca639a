//! A session written out for people and scripts (`tern export`, `/export`): Markdown to read, JSON of a documented,
//! stable shape (below) to process. Both are made from the session as `log::load` reads it, the same reader resume
//! uses; the transcript's events are walked once into an `Export`, which each format renders.
//!
//! What it must not do: let a key or a terminal escape through. Every text is masked (`tern_secrets::mask`, over
//! whatever the log already masked) and cleaned (`tern_text`: Markdown through `clean`, JSON through the JSON
//! stream's escaping), once, on the finished document. A tool result the model saw only a preview of is read back
//! from the session's result store, and only from there: a log edited by hand cannot make the export read another
//! file.
//!
//! The JSON shape, version 1 (fields are added, never renamed or removed, within a version):
//!
//! ```json
//! { "format": "tern-session-export", "version": 1,
//!   "session": { "id", "workspace", "provider", "model", "started_at"?, "forked_from"? },
//!   "turns": [ { "number", "started_at"?, "prompt", "end"?, "items": [
//!       { "type": "assistant", "text", "reasoning"? },
//!       { "type": "tool_call", "call_id", "name", "kind", "args",
//!         "result"?: { "text", "is_error", "duration_ms", "exit_code"?, "full_output_path"? },
//!         "diffs": [ { "path", "added", "removed", "unified" } ] },
//!       { "type": "approval", "tool", "command", "decision" },
//!       { "type": "subagent", "id", "label", "task", "end"?, "result"?, "steps", "elapsed_ms", "usage"?,
//!         "items": [ the items of its own log, as above ] },
//!       { "type": "notice", "text" }, { "type": "error", "message" } ] } ],
//!   "usage"?: { "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens" }, "cost_usd"? }
//! ```
//! Times are UTC, `YYYY-MM-DDTHH:MM:SSZ`; `end` is `completed`, `interrupted`, `aborted`, `iteration_limit` or
//! `error: <message>`.

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;
use tern_protocol::{
    ApprovalDecision, Event, FileDiff, Message, Prices, SaveTo, ToolDetails, ToolKind, TurnEnd, Usage,
};

use crate::log::Loaded;

mod markdown;

/// What `FORMAT` names in the JSON, and its version.
pub const FORMAT: &str = "tern-session-export";
pub const VERSION: u32 = 1;

/// A stored result larger than this is not read back (the preview the model saw stays, with the file's path).
const MAX_STORED_RESULT: u64 = 16 * 1024 * 1024;

/// Which format to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Json,
}

impl Format {
    /// The format a file name asks for: `.json` is JSON, anything else Markdown.
    pub fn for_file(path: &Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("json") => Format::Json,
            _ => Format::Markdown,
        }
    }
}

/// A session as exported: the JSON document, and what the Markdown is made from.
#[derive(Debug, Serialize)]
pub(crate) struct Export {
    pub(crate) format: &'static str,
    pub(crate) version: u32,
    pub(crate) session: About,
    pub(crate) turns: Vec<Turn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) usage: Option<Usage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cost_usd: Option<f64>,
}

/// What the session is.
#[derive(Debug, Serialize)]
pub(crate) struct About {
    pub(crate) id: String,
    pub(crate) workspace: String,
    pub(crate) provider: String,
    /// The model it last used.
    pub(crate) model: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) started_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) forked_from: Option<String>,
}

/// One prompt of the user and what followed it.
#[derive(Debug, Serialize)]
pub(crate) struct Turn {
    /// 0 for what happened before the first prompt.
    pub(crate) number: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) started_at: Option<String>,
    pub(crate) prompt: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) end: Option<String>,
    pub(crate) items: Vec<Item>,
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Item {
    Assistant {
        text: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        reasoning: Option<String>,
    },
    ToolCall(Call),
    Approval {
        tool: String,
        command: String,
        decision: String,
    },
    Subagent(Subagent),
    Notice {
        text: String,
    },
    Error {
        message: String,
    },
}

#[derive(Debug, Serialize)]
pub(crate) struct Call {
    pub(crate) call_id: String,
    pub(crate) name: String,
    pub(crate) kind: ToolKind,
    pub(crate) args: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) result: Option<CallResult>,
    pub(crate) diffs: Vec<Diff>,
}

#[derive(Debug, Serialize)]
pub(crate) struct CallResult {
    /// The whole result: read back from the result store when the model got only a preview.
    pub(crate) text: String,
    pub(crate) is_error: bool,
    pub(crate) duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) full_output_path: Option<String>,
}

/// One file an edit changed, as a unified diff.
#[derive(Debug, Serialize)]
pub(crate) struct Diff {
    pub(crate) path: String,
    pub(crate) added: usize,
    pub(crate) removed: usize,
    pub(crate) unified: String,
}

/// A subagent's work, summarised: its own transcript is in its own log.
#[derive(Debug, Serialize)]
pub(crate) struct Subagent {
    pub(crate) id: String,
    pub(crate) label: String,
    pub(crate) task: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) end: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) result: Option<String>,
    pub(crate) steps: u64,
    pub(crate) elapsed_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) usage: Option<Usage>,
    /// What it did, from its own log (empty when that cannot be read): its answers and calls, as the main agent's.
    pub(crate) items: Vec<Item>,
}

/// The session logged at `path`, in `format`, masked and cleaned: ready to write to a file or a terminal. `prices`
/// (the model catalog) gives the cost, when known.
pub fn export(path: &Path, format: Format, prices: Option<&dyn Prices>) -> std::io::Result<String> {
    let loaded = crate::log::load(path)?;
    let export = build(&loaded, path, prices);
    render(&export, format)
}

/// `export` written out in `format`, masked and cleaned.
fn render(export: &Export, format: Format) -> std::io::Result<String> {
    let text = match format {
        Format::Markdown => markdown::render(export),
        Format::Json => {
            let mut json = serde_json::to_string_pretty(export).map_err(std::io::Error::other)?;
            json.push('\n');
            json
        }
    };
    let masked = tern_secrets::mask(&text);
    Ok(match format {
        Format::Markdown => tern_text::clean(&masked).into_owned(),
        Format::Json => {
            use std::io::Write;
            let mut bytes = Vec::new();
            tern_text::CleanWriter::new(&mut bytes, tern_text::Stream::Json).write_all(masked.as_bytes())?;
            String::from_utf8(bytes).map_err(std::io::Error::other)?
        }
    })
}

/// Writes `text` to a new file at `path` (0600: it holds what the session log holds); an existing file (or link) is
/// left alone and is an error.
pub fn write_new(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(text.as_bytes())?;
    file.flush()
}

/// Where `/export TYPED` writes session `id`: `tern-session-<id>.md` in the workspace when nothing is typed, or in the
/// directory typed; else the file typed (relative to the workspace, `~/` the home directory).
pub fn destination(workspace: &Path, id: &str, typed: &str) -> std::path::PathBuf {
    let name = format!("tern-session-{id}.md");
    let typed = typed.trim();
    if typed.is_empty() {
        return workspace.join(name);
    }
    let path = match (typed.strip_prefix("~/"), std::env::home_dir()) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => workspace.join(typed),
    };
    match path.is_dir() {
        true => path.join(name),
        false => path,
    }
}

/// Exports the session logged at `log` to a new file at `path`, in the format its name asks for. A file already
/// there is never overwritten: the user names another.
pub fn save(log: &Path, path: &Path, prices: Option<&dyn Prices>) -> Result<(), String> {
    if path.symlink_metadata().is_ok() {
        return Err(format!(
            "{} exists; tern does not overwrite it: name another file (/export FILE)",
            path.display()
        ));
    }
    let text = export(log, Format::for_file(path), prices).map_err(|e| format!("cannot read the session: {e}"))?;
    write_new(path, &text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The session `loaded` from the log at `path`, walked into an `Export`.
fn build(loaded: &Loaded, path: &Path, prices: Option<&dyn Prices>) -> Export {
    let events = match loaded.events.is_empty() {
        true => from_messages(&loaded.messages),
        false => loaded.events.clone(),
    };
    let mut walk = Walk::new(stored_results_root(path), true);
    for (at, event) in events {
        walk.event(at, event);
    }
    let model = loaded.model().to_string();
    let cost = walk.usage.as_ref().and_then(|u| prices?.cost(&model, u));
    let started_at = walk.first_at.map(iso_time);
    let mut turns = walk.turns;
    turns.retain(|t| t.number > 0 || !t.items.is_empty());
    Export {
        format: FORMAT,
        version: VERSION,
        session: About {
            id: loaded.meta.id.clone(),
            workspace: loaded.meta.workspace.clone(),
            provider: loaded.meta.provider.clone(),
            model,
            started_at,
            forked_from: loaded.meta.forked_from.clone(),
        },
        turns,
        usage: walk.usage,
        cost_usd: cost,
    }
}

/// The directory whose files a stored result may be read from: the data directory's `sessions` (the log's
/// grandparent), resolved.
fn stored_results_root(log: &Path) -> Option<std::path::PathBuf> {
    let sessions = log.parent()?.parent()?;
    std::fs::canonicalize(sessions).ok()
}

/// The events of a session recorded before events were (its messages only): each user message a turn, each answer
/// and tool result as the events a live session would have sent.
fn from_messages(messages: &[Message]) -> Vec<(u64, Event)> {
    let mut events = Vec::new();
    let mut turn = 0;
    for message in messages {
        match message {
            Message::User { content, .. } => {
                turn += 1;
                events.push(Event::TurnStarted {
                    turn,
                    text: content.clone(),
                });
            }
            Message::Assistant {
                content, tool_calls, ..
            } => {
                if !content.is_empty() {
                    events.push(Event::AssistantMessage {
                        text: content.clone(),
                        reasoning: None,
                    });
                }
                events.extend(tool_calls.iter().map(|c| Event::ToolCallBegin {
                    call_id: c.id.clone(),
                    name: c.name.clone(),
                    kind: ToolKind::recorded_by_name(&c.name),
                    args: c.arguments.clone(),
                }));
            }
            Message::Tool {
                call_id,
                name,
                content,
                is_error,
                ..
            } => events.push(Event::ToolCallEnd {
                call_id: call_id.clone(),
                name: name.clone(),
                output: tern_protocol::ToolOutput {
                    is_error: *is_error,
                    ..tern_protocol::ToolOutput::text(content.clone())
                },
                duration_ms: 0,
                full_output_path: None,
            }),
        }
    }
    events.into_iter().map(|e| (0, e)).collect()
}

/// The walk over the events: the turns so far, and where each call and request is, for its end to find it.
struct Walk {
    turns: Vec<Turn>,
    /// Call id → (turn, item) of its `ToolCall`.
    calls: HashMap<String, (usize, usize)>,
    /// Subagent id → (turn, item) of its `Subagent`.
    subagents: HashMap<String, (usize, usize)>,
    /// Approval request id → (tool, command).
    approvals: HashMap<u64, (String, String)>,
    usage: Option<Usage>,
    first_at: Option<u64>,
    results_root: Option<std::path::PathBuf>,
    /// Whether a subagent's own log is read for its work (only from the main session's: a log cannot lead on).
    subagents_logs: bool,
}

impl Walk {
    fn new(results_root: Option<std::path::PathBuf>, subagents_logs: bool) -> Self {
        Self {
            turns: vec![Turn {
                number: 0,
                started_at: None,
                prompt: String::new(),
                end: None,
                items: Vec::new(),
            }],
            calls: HashMap::new(),
            subagents: HashMap::new(),
            approvals: HashMap::new(),
            usage: None,
            first_at: None,
            results_root,
            subagents_logs,
        }
    }

    fn push(&mut self, item: Item) -> (usize, usize) {
        let turn = self.turns.len() - 1;
        let items = &mut self.turns[turn].items;
        items.push(item);
        (turn, items.len() - 1)
    }

    fn item(&mut self, (turn, item): (usize, usize)) -> Option<&mut Item> {
        self.turns.get_mut(turn)?.items.get_mut(item)
    }

    fn event(&mut self, at: u64, event: Event) {
        if at > 0 {
            self.first_at.get_or_insert(at);
        }
        match event {
            Event::TurnStarted { turn, text } => self.turns.push(Turn {
                number: turn,
                started_at: (at > 0).then(|| iso_time(at)),
                prompt: text,
                end: None,
                items: Vec::new(),
            }),
            Event::AssistantMessage { text, reasoning } if !text.is_empty() || reasoning.is_some() => {
                self.push(Item::Assistant { text, reasoning });
            }
            Event::ToolCallBegin {
                call_id,
                name,
                kind,
                args,
            } => {
                let args = tern_text::calls::call_arguments(&args);
                let at = self.push(Item::ToolCall(Call {
                    call_id: call_id.clone(),
                    name,
                    kind,
                    args,
                    result: None,
                    diffs: Vec::new(),
                }));
                self.calls.insert(call_id, at);
            }
            Event::ToolCallEnd {
                call_id,
                output,
                duration_ms,
                full_output_path,
                ..
            } => self.call_ended(&call_id, output, duration_ms, full_output_path),
            Event::ApprovalRequest(request) => {
                self.approvals.insert(request.id, (request.tool, request.command));
            }
            Event::ApprovalDecided { id, decision } => {
                if let Some((tool, command)) = self.approvals.remove(&id) {
                    self.push(Item::Approval {
                        tool,
                        command,
                        decision: decision_word(&decision),
                    });
                }
            }
            Event::TokenUsage { total, .. } => self.usage = Some(total),
            Event::Notice { text } => {
                self.push(Item::Notice { text });
            }
            Event::Error { message } => {
                self.push(Item::Error { message });
            }
            Event::TurnFinished { reason } => {
                if let Some(turn) = self.turns.last_mut() {
                    turn.end = Some(end_word(&reason));
                }
            }
            Event::SubagentStarted {
                id,
                label,
                task,
                transcript,
                ..
            } => {
                let items = transcript
                    .map(|t| self.subagent_work(Path::new(&t)))
                    .unwrap_or_default();
                let at = self.push(Item::Subagent(Subagent {
                    id: id.clone(),
                    label,
                    task,
                    end: None,
                    result: None,
                    steps: 0,
                    elapsed_ms: 0,
                    usage: None,
                    items,
                }));
                self.subagents.insert(id, at);
            }
            Event::SubagentFinished {
                id,
                end,
                result,
                usage,
                steps,
                elapsed_ms,
                ..
            } => {
                let at = self.subagents.get(&id).copied();
                if let Some(Item::Subagent(work)) = at.and_then(|at| self.item(at)) {
                    work.end = Some(end_word(&end));
                    work.result = Some(result);
                    work.usage = Some(usage);
                    work.steps = steps;
                    work.elapsed_ms = elapsed_ms;
                }
            }
            _ => {}
        }
    }

    /// A subagent's answers and calls from its own log at `path` (under the sessions directory), through the same
    /// loader; nothing when it cannot be read or this walk is itself a subagent's.
    fn subagent_work(&self, path: &Path) -> Vec<Item> {
        let (Some(root), true) = (&self.results_root, self.subagents_logs) else {
            return Vec::new();
        };
        let Some(loaded) = std::fs::canonicalize(path)
            .ok()
            .filter(|p| p.starts_with(root))
            .and_then(|p| crate::log::load(&p).ok())
        else {
            return Vec::new();
        };
        let mut walk = Walk::new(Some(root.clone()), false);
        for (at, event) in loaded.events {
            walk.event(at, event);
        }
        walk.turns.into_iter().flat_map(|t| t.items).collect()
    }

    fn call_ended(
        &mut self,
        call_id: &str,
        output: tern_protocol::ToolOutput,
        duration_ms: u64,
        full_output_path: Option<String>,
    ) {
        let text = full_output_path
            .as_deref()
            .and_then(|p| read_stored(self.results_root.as_deref()?, Path::new(p)))
            .unwrap_or(output.text);
        let (exit_code, diffs) = match &output.details {
            ToolDetails::Exec { exit_code, .. } => (*exit_code, Vec::new()),
            ToolDetails::Diffs { diffs } => (None, diffs.iter().map(unified).collect()),
            _ => (None, Vec::new()),
        };
        let result = CallResult {
            text,
            is_error: output.is_error,
            duration_ms,
            exit_code,
            full_output_path,
        };
        let at = self.calls.get(call_id).copied();
        if let Some(Item::ToolCall(call)) = at.and_then(|at| self.item(at)) {
            call.result = Some(result);
            call.diffs = diffs;
        }
    }
}

/// The text of a stored result at `path`, when it is a file under `root` (the sessions directory) and not huge.
fn read_stored(root: &Path, path: &Path) -> Option<String> {
    let resolved = std::fs::canonicalize(path).ok()?;
    if !resolved.starts_with(root) {
        tracing::warn!(path = %path.display(), "a stored tool result outside the sessions directory is not read");
        return None;
    }
    let file = std::fs::File::open(&resolved).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_STORED_RESULT {
        return None;
    }
    let mut text = String::new();
    std::io::Read::read_to_string(&mut &file, &mut text).ok()?;
    Some(text)
}

/// One file's change as a unified diff (`--- a/path`, `+++ b/path`, hunks with three lines of context).
fn unified(diff: &FileDiff) -> Diff {
    let old = diff.old.as_deref().unwrap_or("");
    let new = diff.new.as_deref().unwrap_or("");
    let from = if diff.old.is_some() {
        format!("a/{}", diff.path)
    } else {
        "/dev/null".to_string()
    };
    let to = if diff.new.is_some() {
        format!("b/{}", diff.path)
    } else {
        "/dev/null".to_string()
    };
    let text = similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&from, &to)
        .to_string();
    Diff {
        path: diff.path.clone(),
        added: diff.added,
        removed: diff.removed,
        unified: text,
    }
}

/// How a turn or a subagent ended, in a word.
fn end_word(end: &TurnEnd) -> String {
    match end {
        TurnEnd::Completed => "completed".into(),
        TurnEnd::Interrupted => "interrupted".into(),
        TurnEnd::Aborted => "aborted".into(),
        TurnEnd::IterationLimit => "iteration_limit".into(),
        TurnEnd::Error { message } => format!("error: {message}"),
    }
}

/// How the user answered an approval request, in a few words.
fn decision_word(decision: &ApprovalDecision) -> String {
    match decision {
        ApprovalDecision::Once => "allowed once".into(),
        ApprovalDecision::Always => "allowed always (this session)".into(),
        ApprovalDecision::AlwaysSaved { to: SaveTo::Project } => "allowed always (saved to the project)".into(),
        ApprovalDecision::AlwaysSaved { to: SaveTo::User } => "allowed always (saved to the user's config)".into(),
        ApprovalDecision::AlwaysEdits { .. } => "edits allowed (this session)".into(),
        ApprovalDecision::Deny { feedback: Some(f) } => format!("denied: {f}"),
        ApprovalDecision::Deny { feedback: None } => "denied".into(),
        ApprovalDecision::Abort => "denied, turn ended".into(),
        ApprovalDecision::Hunks { accepted, .. } => format!("{} hunk(s) accepted", accepted.len()),
        ApprovalDecision::Unattended { frontend } => format!("not asked ({frontend})"),
    }
}

/// Unix milliseconds as `YYYY-MM-DDTHH:MM:SSZ`.
fn iso_time(ms: u64) -> String {
    let secs = ms / 1000;
    let (y, m, d) = crate::civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests;
