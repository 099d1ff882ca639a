//! The contract between the agent and every frontend.
//!
//! Frontends send `Op`s and receive `Event`s (added with the runner); tools produce `ToolOutput`s. Everything here is
//! plain data: serialisable, terminal-free, and shared by the TUI, headless mode and the session store.

pub mod hunks;
pub mod mcp;
pub mod process;
mod session;
mod tool;

pub use session::{Prices, SessionDetails, SessionSummary};
pub use tool::*;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use std::fmt;
use std::str::FromStr;

/// How much runs without asking (the approval gate in `agent::approval` applies it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalMode {
    /// Nothing that writes or runs.
    ReadOnly,
    /// Edits and commands ask.
    Ask,
    /// Edits inside the workspace apply; commands ask.
    #[default]
    AutoEdit,
    /// Nothing asks (writes outside the workspace still do; deny rules still hold).
    FullAuto,
}

impl ApprovalMode {
    /// The modes as a user types them, for help and error texts.
    pub const NAMES: &str = "read-only, ask, auto-edit or full-auto";

    pub const ALL: [ApprovalMode; 4] = [
        ApprovalMode::ReadOnly,
        ApprovalMode::Ask,
        ApprovalMode::AutoEdit,
        ApprovalMode::FullAuto,
    ];

    /// Claude Code's name for the mode (its `permission_mode`), which hook scripts and stream readers compare with.
    pub fn claude_code_name(self) -> &'static str {
        match self {
            ApprovalMode::ReadOnly => "plan",
            ApprovalMode::Ask => "default",
            ApprovalMode::AutoEdit => "acceptEdits",
            ApprovalMode::FullAuto => "bypassPermissions",
        }
    }

    /// The stricter of two modes: the one that lets less happen without asking.
    pub fn stricter(self, other: ApprovalMode) -> ApprovalMode {
        let rank = |m: ApprovalMode| ApprovalMode::ALL.iter().position(|x| *x == m).unwrap_or(0);
        if rank(other) < rank(self) { other } else { self }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ApprovalMode::ReadOnly => "read-only",
            ApprovalMode::Ask => "ask",
            ApprovalMode::AutoEdit => "auto-edit",
            ApprovalMode::FullAuto => "full-auto",
        }
    }
}

impl fmt::Display for ApprovalMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown approval mode `{0}` (expected read-only, ask, auto-edit or full-auto)")]
pub struct ParseModeError(String);

impl FromStr for ApprovalMode {
    type Err = ParseModeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase().replace('_', "-");
        Self::ALL
            .into_iter()
            .find(|mode| mode.as_str() == wanted)
            .ok_or_else(|| ParseModeError(s.to_string()))
    }
}

/// What a frontend asks of the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// A user message; sent while a turn runs, it is queued as the next turn.
    UserTurn {
        text: String,
    },
    /// Stop the running turn now: the stream, the tools, any pending approval.
    Interrupt,
    /// The answer to an `ApprovalRequest`.
    Approve {
        id: u64,
        decision: ApprovalDecision,
    },
    SetApprovalMode {
        mode: ApprovalMode,
    },
    /// Use another model from the next request on (same provider).
    SetModel {
        model: String,
    },
    /// Forget the conversation and start afresh (ignored while a turn runs).
    NewConversation,
    /// Finish what is running and stop the agent task.
    Shutdown,
    /// Add a fact to the project's or the user's AGENTS.md; the system prompt is rebuilt with it. Sent during a
    /// turn, it is done when the turn ends.
    Remember {
        text: String,
        scope: MemoryScope,
    },
    /// Read the context files and skills again and rebuild the system prompt.
    ReloadContext,
    /// Ask for a `ContextReport`: what the model receives and each part's share of the window.
    ShowContext,
    /// Summarise the older part of the conversation now, with an optional focus for the summary (between turns;
    /// while a turn runs the agent says to wait).
    Compact {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        focus: Option<String>,
    },
    /// Revert the file changes of the last turn not yet undone (`force`: also files changed since by someone else).
    Undo {
        #[serde(default)]
        force: bool,
    },
    /// Ask for the turns one can rewind to (answered with `Event::RewindPoints`).
    ListRewindPoints,
    /// Go back to before the user message of `turn`: its conversation, its code (the work tree), or both.
    Rewind {
        turn: u64,
        conversation: bool,
        code: bool,
        #[serde(default)]
        force: bool,
    },
    /// The answer to an `Event::Elicitation`.
    Elicit {
        id: u64,
        answer: ElicitationAnswer,
    },
    /// `/review`: list the hunks the agent changed since `since` (answered with `Event::ReviewHunks`, or a notice when
    /// there are none). Between turns only.
    ReviewStart {
        #[serde(default)]
        since: ReviewSince,
    },
    /// The end of review `id`: revert the hunks listed, all or none (answered with `Event::ReviewApplied`).
    ReviewApply {
        id: u64,
        reverted: Vec<HunkRef>,
    },
    /// Act on an MCP server for this session (`/mcp`). The servers' states show the outcome; a failure comes back as
    /// a notice.
    McpServer {
        name: String,
        action: McpAction,
    },
    /// Run an MCP server's prompt as the user's turn (`/mcp__server__prompt args`): it is fetched with
    /// `prompts/get` and its messages are the turn's text. Refused while a turn runs.
    McpPrompt {
        server: String,
        prompt: String,
        #[serde(default)]
        arguments: serde_json::Map<String, Value>,
    },
    /// A custom command (`/name args` of a prompt file) as the next turn, queued like a message while one runs.
    CommandTurn {
        command: CommandTurn,
    },
    /// The user's keystrokes for live process `id` (its pane has the focus): written to its stdin (its terminal's
    /// input for a PTY process) as they are, unasked. Ignored when it has ended.
    ProcessInput {
        id: String,
        data: String,
    },
    /// The user's pane for live process `id` is now `cols` x `rows`: its pseudo-terminal is resized (the process gets
    /// SIGWINCH). Ignored for a process on pipes.
    ProcessResize {
        id: String,
        cols: u16,
        rows: u16,
    },
    /// Stop live process `id` (the user's `/ps` stop): its whole process group ends.
    ProcessStop {
        id: String,
    },
    /// The answer to an `Event::ReadBuffer`: the text the editor has for the file (its unsaved buffer, or the file as
    /// it reads it), or `None` when it has none: the file is then read from disk.
    BufferText {
        id: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    /// The answer to an `Event::WriteBuffer`: the editor wrote the text (`error` is `None`), or why it did not (the
    /// edit then fails; nothing is written to disk instead).
    BufferWritten {
        id: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
}

/// What a custom command's turn is: its prompt, whose `` !`cmd` `` commands and `@path` files the agent fills in
/// through the tool road (gated, sandboxed, recorded) before the model sees it, and what the command's front matter
/// asks for this turn only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandTurn {
    /// As typed: `/review src/lib.rs`; the transcript shows it.
    pub line: String,
    /// The command file's body, its `$ARGUMENTS` and `$1` … `$9` not yet replaced: only the body's own
    /// `` !`cmd` `` run, never one that came in with the arguments (an attached file's text, a paste).
    pub body: String,
    /// What the user typed after the name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub args: String,
    /// tern command rules (`git add`, `mcp__server__tool`) that run unasked during this turn only: the command's
    /// `allowed-tools`, where its scope lets it have them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// The model for this turn (`model:` in the front matter): an id, or Claude Code's `sonnet`, `opus`, `haiku`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// Which of the agent's changes `/review` walks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewSince {
    /// The last turn's.
    #[default]
    Turn,
    /// Every turn's of the session (not undone).
    Session,
}

/// One hunk of a review: file `file` of `Event::ReviewHunks`, its hunk `hunk`; or only that hunk's part `part` (an
/// index into its `ReviewHunk::parts`) when the user split it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HunkRef {
    pub file: usize,
    pub hunk: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<usize>,
}

/// How a reviewed file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewChange {
    Modified,
    /// Reverting it deletes it.
    Created,
    /// Reverting it restores it.
    Deleted,
    /// Offered whole: keep or revert, no hunks.
    Binary,
}

/// A file `/review` offers, with its hunks. A created, deleted or binary file has one hunk: the whole file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewFile {
    pub path: String,
    pub change: ReviewChange,
    pub hunks: Vec<ReviewHunk>,
    /// Someone else (the user, a command) also changed the file after the turns: its hunks may hold their changes too.
    #[serde(default)]
    pub changed_outside: bool,
}

/// One hunk as a frontend shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewHunk {
    /// Where it is, e.g. "lines 3-7" (in the file as it is now), or "whole file".
    pub lines: String,
    /// The file with only this hunk reverted (`old`) against the file now (`new`): a diff renderer draws just it.
    pub diff: FileDiff,
    /// The hunk's smallest changes (each run of changed lines between unchanged ones), shown the same way, when it
    /// has more than one: what splitting it offers one by one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<ReviewHunk>,
}

/// What `/mcp` does to a server, for this session only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpAction {
    /// Connect it, and offer its tools once it is ready.
    Enable,
    /// Close it and stop offering its tools.
    Disable,
    /// Close its connection and connect again.
    Reconnect,
}

/// The user's answer to an MCP server's request for input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ElicitationAnswer {
    /// The values of the requested fields, by field name.
    Accept { content: serde_json::Map<String, Value> },
    /// Not given; `reason` (when tern declined on its own, e.g. headless) is told to the model.
    Decline {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Dismissed: the server should stop what asked.
    Cancel,
}

/// Whose AGENTS.md a remembered fact goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryScope {
    /// The repository root's (the nearest ancestor with a `.git`, else the workspace).
    #[default]
    Project,
    /// The user's, in tern's config directory.
    User,
}

/// What the model receives on the next request, part by part. Tokens are estimated (~4 characters a token), so the
/// parts add up to `total` exactly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextReport {
    /// The model's context window in tokens.
    pub window: u64,
    pub parts: Vec<ContextShare>,
}

impl ContextReport {
    pub fn total(&self) -> u64 {
        self.parts.iter().map(|p| p.tokens).sum()
    }
}

/// One part of a `ContextReport`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextShare {
    /// Which group it belongs to: "system", "tools" or "conversation".
    pub group: String,
    pub label: String,
    pub chars: usize,
    pub tokens: u64,
}

/// The user's answer to an approval request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run this call.
    Once,
    /// Run it, and add the request's proposed rules for the rest of the session.
    Always,
    /// Run it, and add the request's proposed rules for good: written to the allow list of the config `to` names
    /// (taking effect at once).
    AlwaysSaved { to: SaveTo },
    /// Do not run it; the feedback (if any) is what the model reads as the result.
    Deny { feedback: Option<String> },
    /// Do not run it, and end the turn.
    Abort,
    /// Apply only these hunks of the proposed change (numbered as `hunks::hunks` numbers the request's
    /// diffs); an edited hunk is applied with the user's text as its new side. A hunk the user split is answered
    /// part by part in `split` and is in neither of the other lists. None kept: a denial.
    Hunks {
        accepted: Vec<usize>,
        #[serde(default)]
        edited: Vec<EditedHunk>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        split: Vec<SplitHunk>,
    },
    /// Run it, and allow edits to this file (`scope: file`) or under its directory (`scope: directory`) for the rest
    /// of the session: the request's `always_file` / `always_dir`.
    AlwaysEdits { scope: EditScope },
    /// Not run because `frontend` has no one to ask (`tern run`): the agent words the refusal by what asked (the
    /// mode, a hook) and what would let the call run, never as the user's answer.
    Unattended { frontend: String },
}

/// A hunk the user rewrote before accepting it: `text` replaces the hunk's new side (context lines included).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditedHunk {
    pub hunk: usize,
    pub text: String,
}

/// A hunk answered part by part (its parts as `hunks::Hunk::parts` lists them): the parts accepted, and the parts
/// the user rewrote (`text` replaces the part's new lines, no context). The others are rejected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SplitHunk {
    pub hunk: usize,
    pub accepted: Vec<usize>,
    #[serde(default)]
    pub edited: Vec<EditedPart>,
}

/// A part of a split hunk the user rewrote before accepting it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditedPart {
    pub part: usize,
    pub text: String,
}

/// Where an "always" answer saves its rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SaveTo {
    /// The project's `.tern/config.toml`.
    Project,
    /// The user's own config.
    User,
}

/// How far an "always" for an edit reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EditScope {
    File,
    Directory,
}

/// What the agent tells frontends. Every tool call gets a `ToolCallBegin` and a `ToolCallEnd`, whatever happens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The session is ready: which model, which mode, which tools.
    SessionStarted {
        provider: String,
        model: String,
        mode: ApprovalMode,
        workspace: String,
        tools: Vec<String>,
    },
    TurnStarted {
        turn: u64,
        text: String,
    },
    AssistantDelta {
        text: String,
    },
    ReasoningDelta {
        text: String,
    },
    /// The provider is retrying: discard the partial assistant text and reasoning of the current request; the next
    /// deltas start the answer afresh. Retrying after text was shown (rather than failing the turn) keeps a dropped
    /// connection from costing the user the turn; this event is how every frontend learns to drop what it showed.
    /// The TUI removes the partial cells; `tern run` text output, which cannot unprint, prints only what the new
    /// attempt adds beyond the text already shown (or the new answer on a fresh line when it differs).
    Retrying {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        reason: String,
    },
    /// One complete assistant message (text may be empty when it only calls tools).
    AssistantMessage {
        text: String,
        reasoning: Option<String>,
    },
    ToolCallBegin {
        call_id: String,
        name: String,
        /// What the tool does; `Other` in a session recorded before calls carried it (see `Event::recorded_kinds`).
        #[serde(default)]
        kind: ToolKind,
        args: Value,
    },
    ToolOutputDelta {
        call_id: String,
        chunk: String,
    },
    ToolCallEnd {
        call_id: String,
        name: String,
        output: ToolOutput,
        duration_ms: u64,
        /// Where the full result was saved when the model got only a preview of it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        full_output_path: Option<String>,
    },
    ApprovalRequest(ApprovalRequest),
    TokenUsage {
        last: Usage,
        total: Usage,
        /// The agent's measure of the prompt after this request, in tokens: the server's count when it looks right,
        /// tern's estimate when the server reported none or a count far below what was sent. Frontends show the
        /// context left by it. Absent in sessions recorded before it was sent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        context: Option<u64>,
    },
    Notice {
        text: String,
    },
    Error {
        message: String,
    },
    TurnFinished {
        reason: TurnEnd,
    },
    /// The agent task has stopped (after `Op::Shutdown`, or when every frontend went away).
    ShutdownComplete,
    /// The answer to `Op::ShowContext`.
    ContextReport(ContextReport),
    /// The turns one can rewind to, oldest first (the answer to `Op::ListRewindPoints`).
    RewindPoints {
        points: Vec<RewindPoint>,
    },
    /// The conversation was cut back: the last `turns` user turns are gone. `text` is the first removed message, for
    /// the user to edit and send again. Not recorded: the session log holds the rewind itself.
    Rewound {
        turns: usize,
        text: String,
    },
    /// An undo or rewind would overwrite files changed since the turn (by the user): send `retry` to go ahead.
    ConfirmRevert {
        files: Vec<String>,
        retry: Op,
    },
    /// The approval mode changed for the rest of the session.
    ModeChanged {
        mode: ApprovalMode,
    },
    /// The model changed from the next request on.
    ModelChanged {
        model: String,
    },
    /// How the user answered approval request `id` (recorded, so a resumed session shows it).
    ApprovalDecided {
        id: u64,
        decision: ApprovalDecision,
    },
    /// The model rewrote its plan (`todo_write`): the whole list, which replaces the one before. Recorded, so a resumed
    /// session shows the plan it had.
    PlanUpdated {
        items: Vec<PlanItem>,
    },
    /// A subagent started on `task`; `wait`: the main agent waits for its report. `transcript` is where its own
    /// session log is, for a frontend to open (also after a resume).
    SubagentStarted {
        id: String,
        label: String,
        task: String,
        wait: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        transcript: Option<String>,
    },
    /// Something subagent `id` did, as its own event (a tool call, a prompt to answer, tokens used ...): a frontend
    /// shows `inner` with the code it has for the main agent's events, labelled.
    Subagent {
        id: String,
        label: String,
        inner: Box<Event>,
    },
    /// The session's MCP servers as they stand now: sent when the session starts with servers and whenever one's
    /// state or offer changes. Not recorded: a resumed session starts its servers afresh.
    McpServers {
        servers: Vec<mcp::ServerStatus>,
    },
    /// Subagent `id` ended: how, its report for the main agent, the tokens it used and its model requests.
    SubagentFinished {
        id: String,
        label: String,
        end: TurnEnd,
        result: String,
        usage: Usage,
        steps: u64,
        elapsed_ms: u64,
    },
    /// The report of subagent `id` (started without waiting) was given to the main agent.
    SubagentDelivered {
        id: String,
        label: String,
    },
    /// MCP server `server` asks the user for input during a call: `message` says what for, `schema` is the requested
    /// object schema (flat: string, number, integer, boolean and enum fields). Answer with `Op::Elicit { id, .. }`.
    Elicitation {
        id: u64,
        server: String,
        message: String,
        schema: Value,
    },
    /// The hunks review `id` offers (the answer to `Op::ReviewStart`), file by file. `from` says since when, e.g.
    /// "turn 3". Answer with `Op::ReviewApply { id, .. }`. Not recorded: it is a question, the answer is.
    ReviewHunks {
        id: u64,
        since: ReviewSince,
        from: String,
        files: Vec<ReviewFile>,
    },
    /// Review `id` ended: `reverted` hunks in `files` were put back; `refused` says why nothing was (a file changed
    /// since the review began, a write failed), naming the file and lines. `summary` is the line a frontend shows.
    ReviewApplied {
        id: u64,
        reverted: usize,
        files: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        refused: Option<String>,
        summary: String,
    },
    /// A live process started (by the call `process.call_id`, which returned at once with its id).
    ProcessStarted {
        process: process::ProcessInfo,
    },
    /// What live process `id` printed, as it arrived: stdout and stderr interleaved (one stream on a PTY), escape
    /// codes kept for a terminal emulator; a frontend must render it through one (or clean it) before it reaches a
    /// terminal. Bytes that are not UTF-8 come as U+FFFD. Not recorded in the session log (a dev server prints without
    /// end); the model reads it through its tools.
    ProcessOutput {
        id: String,
        chunk: String,
    },
    /// Live process `id` ended.
    ProcessExited {
        id: String,
        end: process::ProcessEnd,
    },
    /// A read wants the editor's text of `path` (absolute, already allowed by the path policy): only for a frontend
    /// that offered the editor's buffers (`tern acp`). Answered by `Op::BufferText`; not recorded.
    ReadBuffer {
        id: u64,
        path: String,
    },
    /// An approved edit's new text of `path` (absolute, resolved by the path policy) for the editor to write: only for
    /// a frontend that offered to take writes (`tern acp`, `fs/write_text_file`). Answered by `Op::BufferWritten`;
    /// not recorded. Never sent with a known key in `text`.
    WriteBuffer {
        id: u64,
        path: String,
        text: String,
    },
}

impl Event {
    /// Puts in the kind of a tool call recorded before calls carried their kind (by the tool's name then), here and
    /// in a subagent's event. The session loader calls it on every recorded event.
    pub fn recorded_kinds(mut self) -> Event {
        match &mut self {
            Event::ToolCallBegin { name, kind, .. } if *kind == ToolKind::Other => {
                *kind = ToolKind::recorded_by_name(name)
            }
            Event::Subagent { inner, .. } => {
                **inner = std::mem::replace(&mut **inner, Event::ShutdownComplete).recorded_kinds();
            }
            _ => {}
        }
        self
    }
}

/// One step of the model's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanItem {
    pub content: String,
    pub status: PlanStatus,
}

/// How many steps of a plan are completed, and how many there are.
pub fn plan_progress(items: &[PlanItem]) -> (usize, usize) {
    let done = items.iter().filter(|i| i.status == PlanStatus::Completed).count();
    (done, items.len())
}

/// Where a plan step stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    Pending,
    InProgress,
    Completed,
}

impl PlanStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PlanStatus::Pending => "pending",
            PlanStatus::InProgress => "in_progress",
            PlanStatus::Completed => "completed",
        }
    }
}

/// How often streamed text moves at most: the provider reads a fast stream in batches this far apart, the turn passes
/// deltas on no more often, and the TUI draws streamed output at this interval (~30 frames a second).
pub const STREAM_FRAME: std::time::Duration = std::time::Duration::from_millis(33);

/// Streamed output that arrives this much before its time (a `STREAM_FRAME` after the last) goes on at once: the turn
/// passes it to the frontend and the TUI draws it. The stream thread's batches set the pace, and the turn and the
/// screen follow that clock instead of keeping clocks of their own a few milliseconds off it, which cost a timer and
/// a second wake-up each, every frame.
pub const STREAM_EARLY: std::time::Duration = std::time::Duration::from_millis(8);

/// A TUI frame this close to its time is drawn at once: waiting out the difference on a timer would cost two wake-ups
/// (the runtime's timer thread, then the UI) for a fraction of a millisecond.
pub const FRAME_SLACK: std::time::Duration = std::time::Duration::from_millis(2);

/// How the notice a subagent sends while it waits for a free slot begins (frontends show it as queued).
pub const SUBAGENT_QUEUED: &str = "waiting:";

/// A turn `/rewind` can go back to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RewindPoint {
    pub turn: u64,
    /// The user's message that started it.
    pub text: String,
    /// Its conversation can be cut back to before it.
    pub conversation: bool,
    /// The work tree can be put back to before it.
    pub code: bool,
}

/// A call waiting for the user. Answer with `Op::Approve { id, .. }`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    pub id: u64,
    pub call_id: String,
    pub tool: String,
    /// What will run or change, exactly: the command line, or the paths written.
    pub command: String,
    pub cwd: String,
    /// Why it asks, in one line.
    pub reason: String,
    /// The rules "always" would add (one per program of a compound command), each as the user would type it; empty
    /// when "always" is not offered.
    #[serde(default)]
    pub proposed_rules: Vec<String>,
    /// For an edit: the change it would make, computed before asking (what a yes writes, exactly).
    #[serde(default)]
    pub diffs: Vec<FileDiff>,
    /// The change may be answered hunk by hunk (`ApprovalDecision::Hunks`).
    #[serde(default)]
    pub hunk_review: bool,
    /// For an edit: the file "always for this file" would allow edits to, if offered.
    #[serde(default)]
    pub always_file: Option<String>,
    /// For an edit: the directory "always for this directory" would allow edits under, if offered.
    #[serde(default)]
    pub always_dir: Option<String>,
    /// For input to a live process: the process (`p1`) "always" would let the model type into unasked for the rest of
    /// the session, if offered (never for one outside the sandbox). Nothing is saved: a process ends with its session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub always_input: Option<String>,
}

/// Why a turn ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum TurnEnd {
    /// The model answered without calling tools.
    Completed,
    Interrupted,
    /// The user aborted at an approval prompt.
    Aborted,
    /// The iteration limit was reached (a summary was requested).
    IterationLimit,
    Error {
        message: String,
    },
}

/// One message of the conversation, independent of any provider's wire format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    User {
        content: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<Image>,
    },
    Assistant {
        content: String,
        /// The model's visible reasoning, and what the provider needs sent back of it (Anthropic's signed thinking
        /// blocks, OpenAI's encrypted reasoning items) in later requests of the tool-use loop.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning: Option<Reasoning>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The answer to one tool call.
    Tool {
        call_id: String,
        name: String,
        content: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<Image>,
    },
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reasoning {
    /// What is shown to the user: the thinking text, or the reasoning summary.
    pub text: String,
    /// The signature of a single thinking block (sessions written before `blocks` existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// The provider's reasoning exactly as it must be sent back in later requests of the same tool-use loop
    /// (Anthropic thinking blocks with their signatures, OpenAI Responses reasoning items). When present, these,
    /// not `text` and `signature`, are what goes back to the provider.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<ReasoningBlock>,
}

impl Reasoning {
    /// Reasoning text only, with nothing to send back (a local model, an interrupted answer).
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ..Self::default()
        }
    }
}

/// One piece of reasoning as a provider gave it, kept unchanged so it can be returned verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ReasoningBlock {
    /// An Anthropic `thinking` block and its signature.
    Thinking { thinking: String, signature: String },
    /// An Anthropic `redacted_thinking` block: encrypted thinking that is never shown.
    RedactedThinking { data: String },
    /// An OpenAI Responses `reasoning` item: its summary parts and, when requested, its encrypted content (with
    /// `store: false`, the only form in which the reasoning can be carried to the next request).
    ResponsesReasoning {
        id: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        summary: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<String>,
    },
}

/// Tokens one request used, as the provider reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_read_tokens: u64,
    #[serde(default)]
    pub cache_write_tokens: u64,
}

/// Why the model stopped generating.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    ToolCalls,
    /// Hit the output token limit: the runner asks it to continue.
    Length,
    ContentFilter,
    Other(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_counts_lines() {
        let d = FileDiff::new("a.txt", Some("a\nb\nc\n".into()), Some("a\nB\nc\nd\n".into()));
        assert_eq!((d.added, d.removed), (2, 1));
        let created = FileDiff::new("n.txt", None, Some("x\ny\n".into()));
        assert_eq!((created.added, created.removed), (2, 0));
    }

    /// A hunk answer with split hunks names their parts; one recorded before hunks could split (no `split`, or not
    /// even `edited`) still reads, and one that split nothing is written as before.
    #[test]
    fn hunk_answers_read_old_and_new() {
        let old: Option<Event> = serde_json::from_str(
            r#"{"event":"approval_decided","id":3,"decision":{"decision":"hunks","accepted":[0,2],"edited":[]}}"#,
        )
        .map_err(|e| panic!("{e}"))
        .ok();
        let whole = ApprovalDecision::Hunks {
            accepted: vec![0, 2],
            edited: vec![],
            split: vec![],
        };
        assert_eq!(
            old,
            Some(Event::ApprovalDecided {
                id: 3,
                decision: whole.clone()
            })
        );
        let oldest: Option<ApprovalDecision> = serde_json::from_str(r#"{"decision":"hunks","accepted":[1]}"#).ok();
        assert!(matches!(oldest, Some(ApprovalDecision::Hunks { accepted, .. }) if accepted == [1]));
        let json = serde_json::to_value(&whole).unwrap_or_default();
        assert_eq!(
            json,
            serde_json::json!({"decision": "hunks", "accepted": [0, 2], "edited": []})
        );
        let split = ApprovalDecision::Hunks {
            accepted: vec![1],
            edited: vec![],
            split: vec![SplitHunk {
                hunk: 0,
                accepted: vec![0, 2],
                edited: vec![EditedPart {
                    part: 3,
                    text: "x\n".into(),
                }],
            }],
        };
        let back: Option<ApprovalDecision> =
            serde_json::from_value(serde_json::to_value(&split).unwrap_or_default()).ok();
        assert_eq!(back, Some(split));
    }

    /// A saved "always" has a spelling of its own; what sessions recorded before it (a plain "always", a request with
    /// one `proposed_rule`) still reads.
    #[test]
    fn always_answers_and_requests_read_old_and_new() {
        let saved = ApprovalDecision::AlwaysSaved { to: SaveTo::Project };
        let json = serde_json::to_value(&saved).unwrap_or_default();
        assert_eq!(json, serde_json::json!({"decision": "always_saved", "to": "project"}));
        let back: Option<ApprovalDecision> = serde_json::from_value(json).ok();
        assert_eq!(back, Some(saved));
        let old: Option<ApprovalDecision> = serde_json::from_str(r#"{"decision":"always"}"#).ok();
        assert_eq!(old, Some(ApprovalDecision::Always));
        let old: Option<ApprovalRequest> = serde_json::from_str(
            r#"{"id":1,"call_id":"c","tool":"exec","command":"ls","cwd":"/w","reason":"r","proposed_rule":"ls"}"#,
        )
        .ok();
        assert_eq!(old.map(|r| r.proposed_rules), Some(Vec::new()));
    }

    #[test]
    fn output_serialises_compactly() {
        let json = serde_json::to_value(ToolOutput::text("hi")).unwrap_or_default();
        assert_eq!(json, serde_json::json!({"text": "hi"}));
    }

    #[test]
    fn a_call_carries_its_kind_and_an_older_record_gets_the_kind_of_its_name() {
        let begin = Event::ToolCallBegin {
            call_id: "c".into(),
            name: "probe".into(),
            kind: ToolKind::Search,
            args: serde_json::json!({}),
        };
        let line = serde_json::to_string(&begin).unwrap();
        assert!(line.contains(r#""kind":"search""#), "{line}");
        let back: Event = serde_json::from_str(&line).unwrap();
        assert_eq!(
            back.recorded_kinds(),
            begin,
            "a recorded kind is kept, whatever the name"
        );
        let old = r#"{"event":"subagent","id":"1","label":"a","inner":
            {"event":"tool_call_begin","call_id":"c","name":"exec","args":{}}}"#;
        let Event::Subagent { inner, .. } = serde_json::from_str::<Event>(old).unwrap().recorded_kinds() else {
            panic!("not a subagent event");
        };
        assert!(
            matches!(
                *inner,
                Event::ToolCallBegin {
                    kind: ToolKind::Command,
                    ..
                }
            ),
            "{inner:?}"
        );
        assert_eq!(ToolKind::recorded_by_name("mcp__docs__search"), ToolKind::Mcp);
        assert_eq!(ToolKind::recorded_by_name("unknown"), ToolKind::Other);
    }
}
