//! Frontend state: what is shown, built from agent events. No drawing here, and nothing that blocks.

mod approvals;
pub(crate) mod calls;
pub(crate) mod elicit;
pub(crate) mod flash;
pub(crate) mod output;
pub(crate) mod plan;
pub mod processes;
mod reasoning;
mod replay;
pub(crate) mod review;
pub mod subagents;
pub(crate) mod thumbnails;
mod turn;

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use calls::ToolCallState;

use tern_protocol::{ApprovalMode, ApprovalRequest, Event, TurnEnd, Usage};

/// Tools whose parallel calls are shown as one group.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warning,
    Error,
}

/// One entry of the transcript. `rev` changes whenever what it shows changes, so views can cache its layout.
#[derive(Debug, Clone)]
pub struct Cell {
    pub(crate) id: u64,
    pub(crate) rev: u64,
    pub kind: CellKind,
}

#[derive(Debug, Clone)]
pub enum CellKind {
    User(String),
    Assistant {
        text: String,
        streaming: bool,
    },
    Reasoning {
        text: String,
        streaming: bool,
        expanded: bool,
    },
    /// One tool call, or a group of parallel read-only calls: indices into `AppState::calls`.
    Tools(Vec<usize>),
    Notice {
        text: String,
        level: Level,
    },
    /// A subagent's pane with its live progress.
    Subagent(Box<subagents::SubagentPane>),
}

/// The session as the UI shows it.
#[derive(Debug, Default)]
pub struct AppState {
    pub cells: Vec<Cell>,
    pub calls: Vec<ToolCallState>,
    call_index: HashMap<String, usize>,
    /// Which cell shows each call.
    call_cell: HashMap<usize, usize>,
    next_id: u64,
    pub(crate) approvals: VecDeque<ApprovalRequest>,
    pub status: Status,
    /// Messages sent while a turn runs, waiting for their turn.
    pub(crate) queued: VecDeque<String>,
    /// The agent task has stopped.
    pub(crate) agent_gone: bool,
    /// What each approval request asked (by request id), to say what an answer applied to.
    asked: HashMap<u64, String>,
    /// The model's plan (`todo_write`), shown in one pane.
    pub plan: plan::PlanState,
    /// The session's subagents by id.
    pub(crate) subagents: HashMap<String, subagents::Subagent>,
    /// Which subagent asks each pending approval request (request id to subagent id and label); absent: the main
    /// agent.
    pub(crate) approval_from: HashMap<u64, (String, String)>,
    /// MCP servers' requests for input waiting for the user, oldest first.
    pub(crate) elicitations: VecDeque<elicit::PendingElicitation>,
    /// The session's live processes, each with its emulated terminal.
    pub processes: processes::Processes,
    /// The thumbnails of the images the user's messages name (where the terminal can draw them).
    pub(crate) thumbnails: thumbnails::Thumbnails,
}

#[derive(Debug, Default, Clone)]
pub struct Status {
    pub(crate) provider: String,
    pub(crate) model: String,
    pub(crate) mode: ApprovalMode,
    pub(crate) workspace: String,
    pub(crate) usage: Usage,
    /// What the session's subagents used (also part of the session's totals).
    pub subagent_usage: Usage,
    pub(crate) last_usage: Usage,
    /// The agent's measure of the last prompt (`Event::TokenUsage::context`), when it sent one: the context left is
    /// shown by it, not by the server's count, which may be missing or wrong.
    pub(crate) context_tokens: Option<u64>,
    pub(crate) busy: bool,
    pub(crate) turn_started: Option<Instant>,
    /// A retry in progress: what failed and when the next attempt starts.
    pub(crate) retry: Option<(String, Instant)>,
    /// A short message for the status line, until its deadline (see `flash.rs`).
    pub(crate) flash: Option<flash::Flash>,
    pub(crate) last_turn_end: Option<TurnEnd>,
    /// `(done, total)` steps of the model's plan while it has one.
    pub plan: Option<(usize, usize)>,
    /// Mouse capture is off (the terminal selects text; the wheel does not scroll).
    pub(crate) mouse_off: bool,
    /// What models cost, as the session host said (`None`: no cost is shown).
    pub(crate) prices: Option<std::sync::Arc<dyn tern_protocol::Prices>>,
}

impl AppState {
    pub fn new() -> Self {
        Self::default()
    }

    fn push(&mut self, kind: CellKind) -> usize {
        self.next_id += 1;
        self.cells.push(Cell {
            id: self.next_id,
            rev: 0,
            kind,
        });
        self.cells.len() - 1
    }

    fn touch(&mut self, index: usize) {
        if let Some(cell) = self.cells.get_mut(index) {
            cell.rev += 1;
        }
    }

    pub(crate) fn notice(&mut self, text: impl Into<String>, level: Level) {
        self.push(CellKind::Notice {
            text: text.into(),
            level,
        });
    }

    pub(crate) fn flash(&mut self, text: impl Into<String>) {
        self.flash_for(text, flash::FLASH);
    }

    /// A status-line message that lasts `lasts`.
    pub(crate) fn flash_for(&mut self, text: impl Into<String>, lasts: Duration) {
        self.status.flash = Some(flash::Flash::new(text, lasts, flash::Until::Deadline));
    }

    /// A status-line message about the running turn: it goes when the turn ends, or after the usual time.
    pub(crate) fn flash_while_turn(&mut self, text: impl Into<String>) {
        self.status.flash = Some(flash::Flash::new(text, flash::FLASH, flash::Until::TurnEnds));
    }

    /// Starts the token count and the context meter afresh (a new conversation).
    pub(crate) fn forget_usage(&mut self) {
        self.status.usage = Usage::default();
        self.status.last_usage = Usage::default();
        self.status.context_tokens = None;
        self.status.subagent_usage = Usage::default();
    }

    /// The status-line message still true at `now`.
    #[cfg(test)]
    pub(crate) fn flash_text(&self, now: Instant) -> Option<&str> {
        self.status
            .flash
            .as_ref()
            .filter(|f| f.live(now))
            .map(|f| f.text.as_str())
    }

    /// Drops the message once its deadline has passed.
    pub(crate) fn expire_flash(&mut self, now: Instant) {
        if self.status.flash.as_ref().is_some_and(|f| !f.live(now)) {
            self.status.flash = None;
        }
    }

    /// When the screen must be drawn again with nothing else happening: a message's deadline. The loop sleeps until
    /// then instead of ticking.
    pub(crate) fn wake_at(&self) -> Option<Instant> {
        self.status.flash.as_ref().map(|f| f.deadline)
    }

    /// The cell showing a call, for jumps from the history browser.
    pub fn cell_of_call(&self, call_id: &str) -> Option<usize> {
        let call = self.call_index.get(call_id)?;
        self.call_cell.get(call).copied()
    }

    #[cfg(test)]
    pub(crate) fn call(&self, call_id: &str) -> Option<&ToolCallState> {
        self.call_index.get(call_id).and_then(|&i| self.calls.get(i))
    }

    /// Flips a call's expanded flag.
    pub fn toggle_call(&mut self, call: usize) {
        if let Some(c) = self.calls.get_mut(call) {
            c.expanded = !c.expanded;
        }
        if let Some(&cell) = self.call_cell.get(&call) {
            self.touch(cell);
        }
    }

    /// True while something on screen moves (a spinner, a running timer).
    pub(crate) fn animating(&self) -> bool {
        self.status.busy
            || self.subagents_running()
            || self
                .calls
                .iter()
                .rev()
                .take(64)
                .any(|c| c.status == calls::CallStatus::Running)
    }

    /// Applies one agent event.
    pub fn apply(&mut self, event: Event) {
        match event {
            Event::SessionStarted {
                provider,
                model,
                mode,
                workspace,
                ..
            } => self.session_started(provider, model, mode, workspace),
            Event::TurnStarted { text, .. } => self.start_turn(text),
            Event::AssistantDelta { text } => self.stream_text(text),
            Event::ReasoningDelta { text } => self.stream_reasoning(text),
            Event::Retrying {
                attempt,
                max_attempts,
                delay_ms,
                reason,
            } => self.retrying(attempt, max_attempts, delay_ms, reason),
            Event::AssistantMessage { text, .. } => self.finish_message(text),
            Event::ToolCallBegin {
                call_id,
                name,
                kind,
                args,
            } => self.begin_call(call_id, name, kind, args),
            Event::ToolOutputDelta { call_id, chunk } => self.call_output(&call_id, &chunk),
            Event::ToolCallEnd {
                call_id,
                output,
                duration_ms,
                full_output_path,
                ..
            } => self.end_call(&call_id, output, duration_ms, full_output_path),
            Event::ApprovalRequest(request) => self.ask_approval(request),
            Event::Elicitation {
                id,
                server,
                message,
                schema,
            } => self.elicitations.push_back(elicit::PendingElicitation {
                id,
                server,
                message,
                schema,
            }),
            Event::TokenUsage { last, total, context } => {
                self.status.usage = total;
                self.status.last_usage = last;
                self.status.context_tokens = context;
            }
            Event::Notice { text } => self.notice(text, Level::Info),
            Event::Error { message } => self.notice(message, Level::Error),
            Event::TurnFinished { reason } => self.finish_turn(reason),
            Event::ShutdownComplete => self.agent_gone = true,
            // The app keeps them (`App::servers_told`): the state has nothing to show of them.
            Event::McpServers { .. } => {}
            Event::ContextReport(report) => self.notice(super::memory::context_table(&report), Level::Info),
            Event::Rewound { turns, .. } => {
                self.cut_turns(turns);
                self.rewind_plan(turns);
            }
            // The app opens a layer for these.
            Event::RewindPoints { .. } | Event::ConfirmRevert { .. } | Event::ReviewHunks { .. } => {}
            Event::ReviewApplied { summary, refused, .. } => {
                let level = if refused.is_some() { Level::Warning } else { Level::Info };
                self.notice(summary, level);
            }
            Event::ModeChanged { mode } => self.status.mode = mode,
            Event::ModelChanged { model } => self.status.model = model,
            Event::ApprovalDecided { id, decision } => self.approval_decided(id, &decision),
            Event::PlanUpdated { items } => self.update_plan(items),
            event @ (Event::SubagentStarted { .. }
            | Event::Subagent { .. }
            | Event::SubagentFinished { .. }
            | Event::SubagentDelivered { .. }) => self.apply_subagent(event),
            Event::ProcessStarted { process } => self.process_started(process),
            Event::ProcessOutput { id, chunk } => self.process_output(&id, &chunk),
            Event::ProcessExited { id, end } => self.process_exited(&id, end),
            // Only a frontend that offered an editor's buffers is asked for one (`tern acp`).
            Event::ReadBuffer { .. } | Event::WriteBuffer { .. } => {}
        }
    }

    /// The session the agent started on, for the status line.
    fn session_started(&mut self, provider: String, model: String, mode: ApprovalMode, workspace: String) {
        self.status.provider = provider;
        self.status.model = model;
        self.status.mode = mode;
        self.status.workspace = workspace;
    }

    /// Cuts the transcript back to before its last `turns` user messages (a rewind), with their tool calls.
    pub(crate) fn cut_turns(&mut self, turns: usize) {
        if turns == 0 {
            return;
        }
        let users: Vec<usize> = (0..self.cells.len())
            .filter(|&i| matches!(self.cells[i].kind, CellKind::User(_)))
            .collect();
        let cut = users
            .len()
            .checked_sub(turns)
            .and_then(|k| users.get(k))
            .copied()
            .unwrap_or(0);
        let first_call = self.cells[cut..]
            .iter()
            .filter_map(|c| match &c.kind {
                CellKind::Tools(group) => group.iter().min().copied(),
                _ => None,
            })
            .min();
        self.cells.truncate(cut);
        if let Some(first) = first_call {
            self.calls.truncate(first);
            self.call_index.retain(|_, i| *i < first);
            self.call_cell.retain(|i, _| *i < first);
        }
        self.approvals.clear();
    }

    /// Where the current turn's cells begin: streaming cells are never before the last user cell, so searches for
    /// them stop there instead of walking a long session's whole transcript on every event.
    fn turn_start(&self) -> usize {
        self.cells
            .iter()
            .rposition(|c| matches!(c.kind, CellKind::User(_)))
            .unwrap_or(0)
    }

    fn end_reasoning(&mut self) {
        let turn = self.turn_start();
        if let Some(i) = self.cells[turn..]
            .iter()
            .rposition(|c| matches!(c.kind, CellKind::Reasoning { streaming: true, .. }))
            .map(|i| turn + i)
        {
            if let CellKind::Reasoning { streaming, .. } = &mut self.cells[i].kind {
                *streaming = false;
            }
            self.touch(i);
        }
    }

    /// The last user message and the answer to it, for printing on exit.
    pub(crate) fn last_exchange(&self) -> Option<(String, String)> {
        let user = self.cells.iter().rposition(|c| matches!(c.kind, CellKind::User(_)))?;
        let CellKind::User(question) = &self.cells[user].kind else {
            return None;
        };
        let answer: Vec<&str> = self.cells[user..]
            .iter()
            .filter_map(|c| match &c.kind {
                CellKind::Assistant { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        let question = crate::blocks::strip_blocks(question).to_string();
        Some((question, answer.join("\n\n")))
    }
}

#[cfg(test)]
mod tests;
