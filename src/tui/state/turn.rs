//! A turn in the transcript: its start, the model's answer and reasoning as they stream, a retry that voids what
//! streamed, the complete message, and the turn's end.

use std::time::{Duration, Instant};

use super::{AppState, Cell, CellKind, Level, flash};
use tern_protocol::TurnEnd;

impl AppState {
    /// A turn began: the user's message (taken off the queue) opens it, and the status line shows it running.
    pub(super) fn start_turn(&mut self, text: String) {
        if let Some(pos) = self.queued.iter().position(|q| *q == text) {
            self.queued.remove(pos);
        }
        self.push(CellKind::User(text));
        self.plan.turn_started(self.calls.len());
        self.status.busy = true;
        self.status.turn_started = Some(Instant::now());
        self.status.last_turn_end = None;
    }

    /// Streamed answer text: added to the answer streaming, or the start of a new one, which ends the reasoning.
    pub(super) fn stream_text(&mut self, text: String) {
        self.status.retry = None;
        match self.cells.last_mut() {
            Some(Cell {
                kind:
                    CellKind::Assistant {
                        text: t,
                        streaming: true,
                    },
                rev,
                ..
            }) => {
                t.push_str(&text);
                *rev += 1;
            }
            _ => {
                self.end_reasoning();
                self.push(CellKind::Assistant { text, streaming: true });
            }
        }
    }

    /// Streamed reasoning: added to the block streaming, or the start of a new one.
    pub(super) fn stream_reasoning(&mut self, text: String) {
        match self.cells.last_mut() {
            Some(Cell {
                kind:
                    CellKind::Reasoning {
                        text: t,
                        streaming: true,
                        ..
                    },
                rev,
                ..
            }) => {
                t.push_str(&text);
                *rev += 1;
            }
            _ => {
                self.push(CellKind::Reasoning {
                    text,
                    streaming: true,
                    expanded: false,
                });
            }
        }
    }

    /// A request is tried again: what streamed of the failed attempt goes, and the status line says why and when.
    pub(super) fn retrying(&mut self, attempt: u32, max_attempts: u32, delay_ms: u64, reason: String) {
        // What streamed of the failed attempt is void: the retry sends it again. That is the trailing run of
        // reasoning and streaming text: reasoning stops streaming once text begins, yet belongs to the same
        // attempt (a finished request's reasoning is followed by its tool calls or ends the turn).
        while let Some(last) = self.cells.last()
            && matches!(
                last.kind,
                CellKind::Assistant { streaming: true, .. } | CellKind::Reasoning { .. }
            )
        {
            self.cells.pop();
        }
        self.status.retry = Some((
            format!("{reason} — retry {attempt}/{max_attempts}"),
            Instant::now() + Duration::from_millis(delay_ms),
        ));
    }

    /// The model's complete message: it ends the answer streaming (filling it when nothing streamed), or is shown
    /// on its own when no answer streamed and it has text.
    pub(super) fn finish_message(&mut self, text: String) {
        self.end_reasoning();
        let turn = self.turn_start();
        let streaming_index = self.cells[turn..]
            .iter()
            .rposition(|c| matches!(c.kind, CellKind::Assistant { streaming: true, .. }))
            .map(|i| turn + i);
        match streaming_index {
            Some(i) => {
                if let CellKind::Assistant { text: t, streaming } = &mut self.cells[i].kind {
                    *streaming = false;
                    if t.is_empty() {
                        *t = text;
                    }
                }
                self.touch(i);
            }
            None if !text.trim().is_empty() => {
                self.push(CellKind::Assistant { text, streaming: false });
            }
            None => {}
        }
    }

    /// The turn ended: nothing streams any more, how it ended is said (unless it just completed), its prompts go, and
    /// the status line no longer shows it running.
    pub(super) fn finish_turn(&mut self, reason: TurnEnd) {
        self.end_reasoning();
        let turn = self.turn_start();
        for cell in self.cells[turn..].iter_mut() {
            if let CellKind::Assistant { streaming, .. } = &mut cell.kind
                && *streaming
            {
                *streaming = false;
                cell.rev += 1;
            }
        }
        match &reason {
            TurnEnd::Interrupted => self.notice("interrupted", Level::Warning),
            TurnEnd::Aborted => self.notice("turn aborted", Level::Warning),
            TurnEnd::IterationLimit => self.notice("stopped at the tool-call limit for one turn", Level::Warning),
            TurnEnd::Completed | TurnEnd::Error { .. } => {}
        }
        // The turn's own prompts are over; a background subagent's still waits for its answer.
        let from = &self.approval_from;
        self.approvals.retain(|r| from.contains_key(&r.id));
        // An interrupt cancels the requests for input waiting (the agent tells the servers).
        if reason == TurnEnd::Interrupted {
            self.elicitations.clear();
        }
        self.status.busy = false;
        self.status.retry = None;
        self.status.turn_started = None;
        if self
            .status
            .flash
            .as_ref()
            .is_some_and(|f| f.until == flash::Until::TurnEnds)
        {
            self.status.flash = None;
        }
        self.status.last_turn_end = Some(reason);
    }
}
