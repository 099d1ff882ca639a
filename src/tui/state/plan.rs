//! The model's plan as the TUI shows it: the list of the last `PlanUpdated`, kept in one place so the plan pane
//! updates in place instead of a new pane per `todo_write` call. The calls themselves get no transcript cell (the
//! pane is their view) unless they fail, so a refused list is still seen. The plan at the start of every turn is
//! kept, so a rewind puts back the plan the kept conversation had.

use std::sync::Arc;

use super::{AppState, CellKind, calls::ToolCallState};
use tern_protocol::{PlanItem, PlanStatus, ToolKind, ToolOutput, plan_progress};

#[derive(Debug, Default)]
pub struct PlanState {
    /// `None`: no plan (never written, or cleared with an empty list).
    current: Option<Arc<[PlanItem]>>,
    /// The plan as each turn found it, and how many calls came before the turn, oldest turn first.
    at_turn: Vec<(Option<Arc<[PlanItem]>>, usize)>,
    /// Changes whenever the plan does, so a view can cache its layout.
    pub(crate) rev: u64,
}

impl PlanState {
    /// The steps, empty when there is no plan.
    pub fn items(&self) -> &[PlanItem] {
        self.current.as_deref().unwrap_or(&[])
    }

    /// `(done, total)` while a plan exists.
    pub fn progress(&self) -> Option<(usize, usize)> {
        self.current.as_deref().map(plan_progress)
    }

    /// Some step is not completed yet: the pane is worth its rows.
    pub(crate) fn is_open(&self) -> bool {
        self.items().iter().any(|i| i.status != PlanStatus::Completed)
    }

    fn set(&mut self, plan: Option<Arc<[PlanItem]>>) {
        self.current = plan;
        self.rev += 1;
    }

    pub(super) fn update(&mut self, items: Vec<PlanItem>) {
        self.set((!items.is_empty()).then(|| items.into()));
    }

    pub(super) fn turn_started(&mut self, calls: usize) {
        self.at_turn.push((self.current.clone(), calls));
    }

    /// The last `turns` turns are gone: the plan is the one the first of them started with. Returns how many calls
    /// came before that turn.
    fn rewind(&mut self, turns: usize) -> Option<usize> {
        if turns == 0 || self.at_turn.is_empty() {
            return None;
        }
        let keep = self.at_turn.len().saturating_sub(turns);
        let (plan, calls) = self.at_turn.get(keep).cloned()?;
        self.at_turn.truncate(keep);
        self.set(plan);
        Some(calls)
    }

    /// A new conversation starts without a plan.
    pub(crate) fn clear(&mut self) {
        self.at_turn.clear();
        self.set(None);
    }
}

impl AppState {
    /// A `todo_write` call begins: known to the history browser, but shown by the plan pane, not by a cell.
    pub(super) fn begin_plan_call(&mut self, call_id: String, name: String, args: serde_json::Value) {
        let index = self.calls.len();
        self.calls
            .push(ToolCallState::new(call_id.clone(), name, ToolKind::Plan, args));
        self.call_index.insert(call_id, index);
    }

    /// A call without a cell ended in an error: it gets its cell now, so the user sees what went wrong.
    pub(super) fn show_failed_call(&mut self, call_id: &str, output: &ToolOutput) {
        if !output.is_error {
            return;
        }
        if let Some(&index) = self.call_index.get(call_id)
            && !self.call_cell.contains_key(&index)
        {
            let cell = self.push(CellKind::Tools(vec![index]));
            self.call_cell.insert(index, cell);
        }
    }

    /// A rewind of `turns` turns: the plan goes back with them, and so do the calls without a cell that the transcript
    /// cut (`cut_turns`) cannot see.
    pub(super) fn rewind_plan(&mut self, turns: usize) {
        if let Some(calls) = self.plan.rewind(turns)
            && calls < self.calls.len()
        {
            self.calls.truncate(calls);
            self.call_index.retain(|_, i| *i < calls);
            self.call_cell.retain(|i, _| *i < calls);
        }
        self.plan_changed();
    }

    /// The model rewrote its plan: `items` replace it.
    pub(super) fn update_plan(&mut self, items: Vec<PlanItem>) {
        self.plan.update(items);
        self.plan_changed();
    }

    /// The plan changed: the pane and the status bar follow.
    pub(super) fn plan_changed(&mut self) {
        self.status.plan = self.plan.progress();
    }

    /// Forgets the plan (a new conversation).
    pub(crate) fn clear_plan(&mut self) {
        self.plan.clear();
        self.plan_changed();
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use tern_protocol::{Event, ToolDetails};

    fn item(content: &str, status: PlanStatus) -> PlanItem {
        PlanItem {
            content: content.into(),
            status,
        }
    }

    fn plan(done: usize, total: usize) -> Vec<PlanItem> {
        (0..total)
            .map(|i| {
                let status = match i.cmp(&done) {
                    std::cmp::Ordering::Less => PlanStatus::Completed,
                    std::cmp::Ordering::Equal => PlanStatus::InProgress,
                    std::cmp::Ordering::Greater => PlanStatus::Pending,
                };
                item(&format!("step {}", i + 1), status)
            })
            .collect()
    }

    fn todo_call(state: &mut AppState, id: &str, items: Vec<PlanItem>) {
        state.apply(Event::ToolCallBegin {
            call_id: id.into(),
            name: "todo_write".into(),
            kind: tern_protocol::ToolKind::Plan,
            args: json!({"todos": []}),
        });
        state.apply(Event::ToolCallEnd {
            call_id: id.into(),
            name: "todo_write".into(),
            output: ToolOutput::text("Plan saved").with_details(ToolDetails::Plan { items: items.clone() }),
            duration_ms: 0,
            full_output_path: None,
        });
        state.apply(Event::PlanUpdated { items });
    }

    fn turn(state: &mut AppState, n: u64) {
        state.apply(Event::TurnStarted {
            turn: n,
            text: format!("turn {n}"),
        });
    }

    #[test]
    fn later_calls_update_the_one_plan_without_cells() {
        let mut state = AppState::new();
        turn(&mut state, 1);
        todo_call(&mut state, "t1", plan(0, 3));
        todo_call(&mut state, "t2", plan(1, 3));
        todo_call(&mut state, "t3", plan(2, 3));
        assert_eq!(state.plan.progress(), Some((2, 3)));
        assert_eq!(state.status.plan, Some((2, 3)));
        assert_eq!(state.plan.items()[2].status, PlanStatus::InProgress);
        // One user cell; the three calls are in the history browser's list, not in the transcript.
        assert_eq!(state.cells.len(), 1);
        assert_eq!(state.calls.len(), 3);
        assert!(state.plan.is_open());
        todo_call(&mut state, "t4", plan(3, 3));
        assert!(!state.plan.is_open());
        assert_eq!(state.status.plan, Some((3, 3)));
    }

    #[test]
    fn a_failed_call_gets_a_cell_and_leaves_the_plan() {
        let mut state = AppState::new();
        turn(&mut state, 1);
        todo_call(&mut state, "t1", plan(0, 2));
        state.apply(Event::ToolCallBegin {
            call_id: "bad".into(),
            name: "todo_write".into(),
            kind: tern_protocol::ToolKind::Plan,
            args: json!({}),
        });
        state.apply(Event::ToolCallEnd {
            call_id: "bad".into(),
            name: "todo_write".into(),
            output: ToolOutput::error("Error: steps 1, 2 are all in_progress"),
            duration_ms: 0,
            full_output_path: None,
        });
        assert_eq!(state.cells.len(), 2);
        assert!(matches!(&state.cells[1].kind, CellKind::Tools(calls) if calls == &vec![1]));
        assert_eq!(state.cell_of_call("bad"), Some(1));
        assert_eq!(state.plan.progress(), Some((0, 2)));
    }

    #[test]
    fn an_empty_list_clears_the_plan() {
        let mut state = AppState::new();
        todo_call(&mut state, "t1", plan(0, 2));
        todo_call(&mut state, "t2", Vec::new());
        assert_eq!(state.plan.progress(), None);
        assert_eq!(state.status.plan, None);
        assert!(state.plan.items().is_empty());
    }

    #[test]
    fn a_rewind_brings_back_the_plan_of_the_kept_turns() {
        let mut state = AppState::new();
        turn(&mut state, 1);
        todo_call(&mut state, "t1", plan(0, 4));
        turn(&mut state, 2);
        todo_call(&mut state, "t2", plan(2, 4));
        turn(&mut state, 3);
        todo_call(&mut state, "t3", plan(3, 4));
        state.apply(Event::Rewound {
            turns: 2,
            text: "turn 2".into(),
        });
        assert_eq!(state.plan.progress(), Some((0, 4)));
        assert_eq!(state.status.plan, Some((0, 4)));
        // The rewound turns' calls are gone from the history too, though they had no cells.
        assert_eq!(state.calls.len(), 1);
        assert!(state.call("t2").is_none());
        state.apply(Event::Rewound {
            turns: 1,
            text: "turn 1".into(),
        });
        assert_eq!(state.plan.progress(), None);
        state.clear_plan();
        assert_eq!(state.status.plan, None);
    }
}
