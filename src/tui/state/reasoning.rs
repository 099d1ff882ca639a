//! Folding and unfolding the model's reasoning (Ctrl+R): the block that led to the selected tool call, or, with no
//! call selected, all of them at once.

use super::{AppState, CellKind};

impl AppState {
    /// Toggles reasoning. `near`: the cell of the selected tool call; the reasoning block before it in its turn is
    /// toggled. Without one (or with no reasoning before it), every block is opened, or, when all are open, folded.
    /// False when there is no reasoning at all.
    pub(crate) fn toggle_reasoning(&mut self, near: Option<usize>) -> bool {
        if let Some(index) = near.and_then(|cell| self.reasoning_before(cell)) {
            if let CellKind::Reasoning { expanded, .. } = &mut self.cells[index].kind {
                *expanded = !*expanded;
            }
            self.touch(index);
            return true;
        }
        let blocks: Vec<usize> = (0..self.cells.len())
            .filter(|&i| matches!(self.cells[i].kind, CellKind::Reasoning { .. }))
            .collect();
        let open = blocks
            .iter()
            .any(|&i| matches!(self.cells[i].kind, CellKind::Reasoning { expanded: false, .. }));
        for &i in &blocks {
            if let CellKind::Reasoning { expanded, .. } = &mut self.cells[i].kind
                && *expanded != open
            {
                *expanded = open;
                self.cells[i].rev += 1;
            }
        }
        !blocks.is_empty()
    }

    /// The reasoning block at or before `cell`, not before the user message that began its turn.
    fn reasoning_before(&self, cell: usize) -> Option<usize> {
        let cells = self.cells.get(..=cell)?;
        for (i, c) in cells.iter().enumerate().rev() {
            match c.kind {
                CellKind::Reasoning { .. } => return Some(i),
                CellKind::User(_) => return None,
                _ => {}
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::state::{AppState, CellKind};
    use tern_protocol::{Event, ToolOutput};

    fn expanded(s: &AppState) -> Vec<bool> {
        s.cells
            .iter()
            .filter_map(|c| match c.kind {
                CellKind::Reasoning { expanded, .. } => Some(expanded),
                _ => None,
            })
            .collect()
    }

    /// Two turns, each: reasoning, then a tool call. Returns the cells of the two calls.
    fn two_turns(s: &mut AppState) -> (usize, usize) {
        let mut cells = Vec::new();
        for turn in 1..=2u64 {
            s.apply(Event::TurnStarted {
                turn,
                text: format!("q{turn}"),
            });
            s.apply(Event::ReasoningDelta {
                text: format!("thinking {turn}"),
            });
            let id = format!("c{turn}");
            s.apply(Event::ToolCallBegin {
                call_id: id.clone(),
                name: "exec".into(),
                kind: tern_protocol::ToolKind::Command,
                args: json!({"command": "ls"}),
            });
            s.apply(Event::ToolCallEnd {
                call_id: id.clone(),
                name: "exec".into(),
                output: ToolOutput::text("ok"),
                duration_ms: 1,
                full_output_path: None,
            });
            cells.push(s.cell_of_call(&id).unwrap());
        }
        (cells[0], cells[1])
    }

    #[test]
    fn ctrl_r_toggles_the_selected_calls_reasoning_only() {
        let mut s = AppState::new();
        let (first, second) = two_turns(&mut s);
        assert!(s.toggle_reasoning(Some(first)));
        assert_eq!(expanded(&s), [true, false]);
        assert!(s.toggle_reasoning(Some(second)));
        assert_eq!(expanded(&s), [true, true]);
        assert!(s.toggle_reasoning(Some(first)));
        assert_eq!(expanded(&s), [false, true]);
    }

    #[test]
    fn ctrl_r_without_a_selection_opens_all_then_folds_all() {
        let mut s = AppState::new();
        assert!(!s.toggle_reasoning(None), "no reasoning: nothing to toggle");
        let (first, _) = two_turns(&mut s);
        let revs: Vec<u64> = s.cells.iter().map(|c| c.rev).collect();
        s.toggle_reasoning(Some(first));
        assert!(s.toggle_reasoning(None));
        assert_eq!(expanded(&s), [true, true], "one was folded: all open");
        assert!(s.toggle_reasoning(None));
        assert_eq!(expanded(&s), [false, false], "all were open: all fold");
        let changed = s.cells.iter().zip(&revs).filter(|(c, r)| c.rev != **r).count();
        assert_eq!(changed, 2, "only the reasoning cells are laid out again");
    }

    #[test]
    fn a_selected_call_without_reasoning_in_its_turn_toggles_all() {
        let mut s = AppState::new();
        two_turns(&mut s);
        s.apply(Event::TurnStarted {
            turn: 3,
            text: "q3".into(),
        });
        s.apply(Event::ToolCallBegin {
            call_id: "c3".into(),
            name: "exec".into(),
            kind: tern_protocol::ToolKind::Command,
            args: json!({"command": "ls"}),
        });
        let third = s.cell_of_call("c3").unwrap();
        assert!(s.toggle_reasoning(Some(third)));
        assert_eq!(expanded(&s), [true, true]);
    }
}
