//! What the TUI knows about each tool call: built from `ToolCallBegin` / `ToolOutputDelta` / `ToolCallEnd` events.
//! The transcript shows calls as panes; the history browser lists them all.

use std::collections::VecDeque;
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

use super::output::StyledLine;
use super::{AppState, Cell, CellKind};
use tern_protocol::{ToolKind, ToolOutput};
use tern_text::ansi::Style;

/// Lines of live output kept per running call (the pane shows the tail; the full result arrives with the end event).
pub(crate) const LIVE_TAIL_LINES: usize = 200;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum CallStatus {
    Running,
    Done,
    Failed,
}

#[derive(Debug, Clone)]
pub struct ToolCallState {
    pub call_id: String,
    pub name: String,
    /// What the tool does, as it said when the call began.
    pub(crate) kind: ToolKind,
    /// Arguments as the model sent them (an object, or a raw string when they were not JSON).
    pub(crate) args: Value,
    /// The key argument shown in headers and lists: command, path, pattern ...
    pub(crate) key_arg: String,
    /// Wall-clock start, for the history browser's time column.
    pub(crate) started_at: SystemTime,
    /// Monotonic start, for the running timer.
    pub(crate) started: Instant,
    pub(crate) status: CallStatus,
    pub(crate) duration: Option<Duration>,
    /// The result as the model got it (with the structured details for the UI).
    pub output: Option<ToolOutput>,
    /// Where the full result is stored when the model got a preview.
    pub(crate) full_output_path: Option<String>,
    /// The tail of live output while running, with its colours.
    pub(crate) live: VecDeque<StyledLine>,
    /// A partial last line of live output, as it came (colour codes and all).
    pub(crate) live_partial: String,
    /// The colours in effect where `live_partial` starts.
    live_style: Style,
    /// Once done: the coloured lines of its live output, which the result's lines of the same text are shown with
    /// (the result the model got has no colours). Only coloured lines are kept.
    pub(crate) coloured: Vec<StyledLine>,
    /// Live output bytes seen in all.
    pub(crate) live_bytes: usize,
    pub(crate) expanded: bool,
    /// The approval request this call waits on; while set the pane says "waiting for approval", not a timer.
    pub(crate) waiting: Option<u64>,
}

impl ToolCallState {
    pub(crate) fn new(call_id: String, name: String, kind: ToolKind, args: Value) -> Self {
        let key_arg = tern_text::calls::key_argument(&args);
        Self {
            call_id,
            name,
            kind,
            args,
            key_arg,
            started_at: SystemTime::now(),
            started: Instant::now(),
            status: CallStatus::Running,
            duration: None,
            output: None,
            full_output_path: None,
            live: VecDeque::new(),
            live_partial: String::new(),
            live_style: Style::default(),
            coloured: Vec::new(),
            live_bytes: 0,
            expanded: false,
            waiting: None,
        }
    }

    /// The call waits for the user to answer approval request `id`.
    pub(crate) fn wait_for_approval(&mut self, id: u64) {
        self.waiting = Some(id);
    }

    /// The user answered: the call's time counts from now, so the wait is not part of its duration.
    pub(crate) fn approval_answered(&mut self) {
        self.waiting = None;
        self.started = Instant::now();
    }

    /// Adds a chunk of live output, keeping only the last `LIVE_TAIL_LINES` lines.
    pub(crate) fn push_live(&mut self, chunk: &str) {
        self.live_bytes += chunk.len();
        let mut text = std::mem::take(&mut self.live_partial);
        text.push_str(chunk);
        let mut parts: Vec<&str> = text.split('\n').collect();
        let last = parts.pop().unwrap_or("");
        for line in parts {
            if self.live.len() == LIVE_TAIL_LINES {
                self.live.pop_front();
            }
            self.live.push_back(StyledLine::parse(line, &mut self.live_style));
        }
        self.live_partial = last.to_string();
    }

    /// The partial last line of live output as shown.
    pub(crate) fn live_partial(&self) -> StyledLine {
        StyledLine::parse(&self.live_partial, &mut self.live_style.clone())
    }

    pub(crate) fn finish(&mut self, output: ToolOutput, duration: Duration, full_output_path: Option<String>) {
        self.status = if output.is_error {
            CallStatus::Failed
        } else {
            CallStatus::Done
        };
        self.duration = Some(duration);
        self.waiting = None;
        self.output = Some(output);
        // The result replaces the live tail on screen; thousands of finished calls should not each keep 200 lines.
        // Its coloured lines stay, to colour the result's.
        let partial = self.live_partial();
        self.coloured = std::mem::take(&mut self.live)
            .into_iter()
            .chain(std::iter::once(partial))
            .filter(StyledLine::coloured)
            .collect();
        self.live_partial = String::new();
        self.full_output_path = full_output_path;
    }

    pub(crate) fn elapsed(&self) -> Duration {
        self.duration.unwrap_or_else(|| self.started.elapsed())
    }
}

impl AppState {
    /// A tool call began: the plan's own call updates the plan; any other gets a pane, in the last cell's group when
    /// both only read or search and that group's calls all still run.
    pub(super) fn begin_call(&mut self, call_id: String, name: String, kind: ToolKind, args: Value) {
        self.end_reasoning();
        if kind == ToolKind::Plan {
            self.begin_plan_call(call_id, name, args);
            return;
        }
        // Reads and searches running together share one cell.
        let groupable = kind.only_looks();
        let index = self.calls.len();
        self.calls.push(ToolCallState::new(call_id.clone(), name, kind, args));
        self.call_index.insert(call_id, index);
        let joins = groupable
            && matches!(self.cells.last(), Some(Cell { kind: CellKind::Tools(group), .. })
                if group.iter().all(|&g| self.calls[g].status == CallStatus::Running
                    && self.calls[g].kind.only_looks()));
        let cell = if joins {
            let last = self.cells.len() - 1;
            if let CellKind::Tools(group) = &mut self.cells[last].kind {
                group.push(index);
            }
            self.touch(last);
            last
        } else {
            self.push(CellKind::Tools(vec![index]))
        };
        self.call_cell.insert(index, cell);
    }

    /// Output of a running call: added to its live tail.
    pub(super) fn call_output(&mut self, call_id: &str, chunk: &str) {
        if let Some(&i) = self.call_index.get(call_id) {
            self.calls[i].push_live(chunk);
            if let Some(&cell) = self.call_cell.get(&i) {
                self.touch(cell);
            }
        }
    }

    /// A call ended with `output` after `duration_ms`; a failed plan call gets a cell to say so.
    pub(super) fn end_call(
        &mut self,
        call_id: &str,
        output: ToolOutput,
        duration_ms: u64,
        full_output_path: Option<String>,
    ) {
        self.show_failed_call(call_id, &output);
        if let Some(&i) = self.call_index.get(call_id) {
            self.calls[i].finish(output, Duration::from_millis(duration_ms), full_output_path);
            if let Some(&cell) = self.call_cell.get(&i) {
                self.touch(cell);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn live_tail_keeps_last_lines_and_partials() {
        let mut c = ToolCallState::new(
            "c".into(),
            "exec".into(),
            tern_protocol::ToolKind::Command,
            json!({"command": "ls"}),
        );
        assert_eq!(c.key_arg, "ls");
        c.push_live("a\nb");
        c.push_live("c\r\n");
        assert_eq!(c.live, [StyledLine::unstyled("a"), StyledLine::unstyled("bc")]);
        for i in 0..500 {
            c.push_live(&format!("{i}\n"));
        }
        assert_eq!(c.live.len(), LIVE_TAIL_LINES);
        assert_eq!(c.live.back().map(|l| l.text.as_str()), Some("499"));
    }

    #[test]
    fn colours_carry_across_chunks_and_lines_and_outlive_the_call() {
        let mut c = ToolCallState::new("c".into(), "exec".into(), ToolKind::Command, json!({"command": "make"}));
        c.push_live("\u{1b}[32mok");
        c.push_live(" still green\nnext\u{1b}[0m plain\nplain line\n");
        assert_eq!(c.live[0].text, "ok still green");
        assert!(c.live[0].coloured() && c.live[1].coloured() && !c.live[2].coloured());
        c.finish(
            ToolOutput::text("ok still green\nnext plain\nplain line\n"),
            Duration::ZERO,
            None,
        );
        assert!(c.live.is_empty());
        let kept: Vec<&str> = c.coloured.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(kept, ["ok still green", "next plain"]);
    }
}
