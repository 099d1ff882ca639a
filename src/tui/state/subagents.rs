//! Subagents on screen: each is a pane in the main transcript with its live progress (label, current tool, model
//! requests, tokens, time; done or failed), and a transcript of its own, an `AppState` built from its events by the
//! same `apply` as the main one's, which the transcript viewer shows read-only. After a resume, the main log holds
//! only a subagent's start, end, prompts and tokens: its transcript is loaded from its own log when opened.

use std::time::{Duration, Instant};

use super::{AppState, Cell, CellKind};
use tern_protocol::{Event, SUBAGENT_QUEUED, TurnEnd, Usage};

/// How a subagent stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubagentStatus {
    /// Waiting for a free slot (`[subagents] max_concurrent`).
    Queued,
    Running,
    Done,
    /// Interrupted, aborted or failed.
    Failed,
}

/// What a subagent's pane shows.
#[derive(Debug, Clone)]
pub struct SubagentPane {
    pub id: String,
    pub label: String,
    pub(crate) task: String,
    pub(crate) wait: bool,
    pub status: SubagentStatus,
    /// The tool it runs now.
    pub(crate) tool: Option<String>,
    /// Model requests so far.
    pub steps: u64,
    pub(crate) usage: Usage,
    pub(crate) started: Instant,
    /// Set when it ended.
    pub(crate) elapsed: Option<Duration>,
    pub(crate) end: Option<TurnEnd>,
    /// Its report (the first line shows in the pane).
    pub result: Option<String>,
    /// Its report was given to the main agent (started without waiting).
    pub(crate) delivered: bool,
}

/// A subagent the session started: its pane's cell and its own transcript.
#[derive(Debug, Default)]
pub(crate) struct Subagent {
    /// The index of its pane in `AppState::cells` when last found there.
    cell: usize,
    /// Where its session log is, when it has one.
    pub(crate) transcript: Option<String>,
    /// The `spawn` call that started it (an index into `AppState::calls`).
    pub(crate) call: Option<usize>,
    /// Its transcript as far as this session saw it (empty after a resume until loaded from `transcript`).
    pub(crate) view: AppState,
}

impl AppState {
    /// Applies the events that concern subagents (any other is ignored).
    pub(super) fn apply_subagent(&mut self, event: Event) {
        match event {
            Event::SubagentStarted {
                id,
                label,
                task,
                wait,
                transcript,
            } => self.start_subagent(id, label, task, wait, transcript),
            Event::Subagent { id, label, inner } => self.subagent_event(&id, &label, *inner),
            Event::SubagentFinished {
                id,
                end,
                result,
                usage,
                steps,
                elapsed_ms,
                ..
            } => self.finish_subagent(&id, end, result, usage, steps, elapsed_ms),
            Event::SubagentDelivered { id, .. } => self.update_pane(&id, |pane| pane.delivered = true),
            _ => {}
        }
    }

    /// Subagent `id` started: its pane is added to the transcript, tied to the `spawn` call that started it.
    fn start_subagent(&mut self, id: String, label: String, task: String, wait: bool, transcript: Option<String>) {
        let pane = SubagentPane {
            id: id.clone(),
            label,
            task,
            wait,
            status: SubagentStatus::Running,
            tool: None,
            steps: 0,
            usage: Usage::default(),
            started: Instant::now(),
            elapsed: None,
            end: None,
            result: None,
            delivered: false,
        };
        let cell = self.push(CellKind::Subagent(Box::new(pane)));
        let call = self.spawn_call_of_next();
        self.subagents.insert(
            id,
            Subagent {
                cell,
                transcript,
                call,
                view: AppState::new(),
            },
        );
    }

    /// Something subagent `id` did: a prompt it asks joins the main queue, its tokens count, its pane shows its
    /// progress, and its own transcript gets the event.
    fn subagent_event(&mut self, id: &str, label: &str, inner: Event) {
        match &inner {
            Event::ApprovalRequest(request) => {
                self.approval_from
                    .insert(request.id, (id.to_string(), label.to_string()));
                self.asked
                    .insert(request.id, format!("{} (subagent {label})", request.command));
                self.approvals.push_back(request.clone());
            }
            Event::TokenUsage { last, .. } => add(&mut self.status.subagent_usage, last),
            _ => {}
        }
        self.update_pane(id, |pane| match &inner {
            Event::TurnStarted { .. } => pane.status = SubagentStatus::Running,
            Event::Notice { text } if text.starts_with(SUBAGENT_QUEUED) => pane.status = SubagentStatus::Queued,
            Event::ToolCallBegin { name, .. } => pane.tool = Some(name.clone()),
            Event::ToolCallEnd { .. } => pane.tool = None,
            Event::TokenUsage { total, .. } => {
                pane.steps += 1;
                pane.usage = *total;
            }
            _ => {}
        });
        if let Some(subagent) = self.subagents.get_mut(id) {
            subagent.view.apply(inner);
        }
    }

    /// Subagent `id` ended: the prompts it left go, and its pane shows how it ended, its report and what it used.
    fn finish_subagent(&mut self, id: &str, end: TurnEnd, result: String, usage: Usage, steps: u64, elapsed_ms: u64) {
        // A prompt it left unanswered (it was interrupted meanwhile) has nobody to answer any more.
        let gone: Vec<u64> = self
            .approval_from
            .iter()
            .filter(|(_, (from, _))| *from == id)
            .map(|(request, _)| *request)
            .collect();
        self.approvals.retain(|r| !gone.contains(&r.id));
        for request in gone {
            self.approval_from.remove(&request);
        }
        self.update_pane(id, |pane| {
            pane.status = match end {
                TurnEnd::Completed | TurnEnd::IterationLimit => SubagentStatus::Done,
                _ => SubagentStatus::Failed,
            };
            pane.tool = None;
            pane.end = Some(end);
            pane.result = Some(result);
            pane.usage = usage;
            pane.steps = steps;
            pane.elapsed = Some(Duration::from_millis(elapsed_ms));
        });
    }

    /// Changes subagent `id`'s pane and marks its cell changed.
    fn update_pane(&mut self, id: &str, change: impl FnOnce(&mut SubagentPane)) {
        let Some(index) = self.pane_cell(id) else {
            return;
        };
        if let Some(Cell {
            kind: CellKind::Subagent(pane),
            rev,
            ..
        }) = self.cells.get_mut(index)
        {
            change(pane);
            *rev += 1;
        }
    }

    /// The cell of subagent `id`'s pane: where it was, or found again after the transcript was cut.
    fn pane_cell(&mut self, id: &str) -> Option<usize> {
        let subagent = self.subagents.get_mut(id)?;
        let is_it = |cell: &Cell| matches!(&cell.kind, CellKind::Subagent(p) if p.id == id);
        if self.cells.get(subagent.cell).is_some_and(is_it) {
            return Some(subagent.cell);
        }
        let found = self.cells.iter().rposition(is_it)?;
        subagent.cell = found;
        Some(found)
    }

    /// Subagent `id`'s transcript: what this session saw of it, or, when it saw only what the main log keeps (a
    /// resumed session), its own log, loaded once. The log is one small file, read when the user opens it.
    /// `load` reads a log (`Host::transcript`).
    pub fn subagent_transcript(
        &mut self,
        id: &str,
        load: impl FnOnce(&std::path::Path) -> Result<crate::host::Transcript, String>,
    ) -> Option<&AppState> {
        let subagent = self.subagents.get_mut(id)?;
        let seen = subagent.view.cells.iter().any(|c| matches!(c.kind, CellKind::User(_)));
        if !seen && let Some(path) = &subagent.transcript {
            match load(std::path::Path::new(path)) {
                Ok((messages, events)) => {
                    let mut view = AppState::new();
                    view.replay(&messages, events);
                    subagent.view = view;
                }
                Err(e) => subagent
                    .view
                    .notice(format!("cannot read the transcript {path}: {e}"), super::Level::Error),
            }
        }
        Some(&subagent.view)
    }

    /// The `spawn` call a subagent that starts now belongs to. The runner begins the calls of a step in call order
    /// and starts their subagents in the same order, each before any later one: so it is the first `spawn` call
    /// still running that has no subagent yet.
    fn spawn_call_of_next(&self) -> Option<usize> {
        let taken: std::collections::HashSet<usize> = self.subagents.values().filter_map(|s| s.call).collect();
        let from = self.calls.len().saturating_sub(64);
        (from..self.calls.len()).find(|i| {
            let call = &self.calls[*i];
            call.kind == tern_protocol::ToolKind::Agent
                && call.status == super::calls::CallStatus::Running
                && !taken.contains(i)
        })
    }

    /// The subagent that call `index` (a `spawn` call) started.
    pub(crate) fn subagent_of_call(&self, index: usize) -> Option<String> {
        self.subagents
            .iter()
            .find(|(_, s)| s.call == Some(index))
            .map(|(id, _)| id.clone())
    }

    /// Whether any subagent runs (its pane's timer moves).
    pub(crate) fn subagents_running(&self) -> bool {
        self.subagents.values().any(|s| {
            matches!(self.cells.get(s.cell).map(|c| &c.kind),
                Some(CellKind::Subagent(p)) if matches!(p.status, SubagentStatus::Running | SubagentStatus::Queued))
        })
    }

    /// After a replay: a subagent the recording left running did not survive the restart.
    pub(super) fn settle_subagents(&mut self) {
        for cell in &mut self.cells {
            if let CellKind::Subagent(pane) = &mut cell.kind
                && matches!(pane.status, SubagentStatus::Running | SubagentStatus::Queued)
            {
                pane.status = SubagentStatus::Failed;
                pane.tool = None;
                pane.end = Some(TurnEnd::Interrupted);
                cell.rev += 1;
            }
        }
    }
}

fn add(total: &mut Usage, more: &Usage) {
    total.input_tokens += more.input_tokens;
    total.output_tokens += more.output_tokens;
    total.cache_read_tokens += more.cache_read_tokens;
    total.cache_write_tokens += more.cache_write_tokens;
}
