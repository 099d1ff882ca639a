//! A resumed session on screen: the recorded transcript events go through the same `apply` as the live session's, so
//! tool panes, diffs, the history browser and token totals come back as they were. Sessions recorded before events
//! were kept (messages only) come back as prose.

use std::time::{Duration, SystemTime};

use super::calls::CallStatus;
use super::{AppState, CellKind, Level};
use tern_protocol::{Event, Message, ToolOutput};

/// What a call that never ended (tern stopped while it ran) shows after a resume.
const NEVER_ENDED: &str = "interrupted: tern stopped before this call ended";

impl AppState {
    /// Shows a resumed session: its recorded `events` (with their Unix-ms times) when it has them, else the prose of
    /// `history` (which a caller with events need not pass). Afterwards nothing is busy and nothing waits for an answer, whatever the session was doing when it
    /// stopped.
    pub fn replay(&mut self, history: &[Message], events: Vec<(u64, Event)>) {
        if events.is_empty() {
            self.replay_prose(history);
            return;
        }
        let turns = match self.replay_events(events) {
            1 => "1 turn".to_string(),
            n => format!("{n} turns"),
        };
        self.notice(
            format!("resumed a session of {turns}; the model has the whole conversation"),
            Level::Info,
        );
    }

    /// Shows the last turns of a long session (from its log's tail) while the whole of it loads; `replay` of the
    /// whole record replaces them.
    pub fn preview(&mut self, events: Vec<(u64, Event)>) {
        self.replay_events(events);
        self.notice("loading the whole session…", Level::Info);
    }

    /// Applies recorded events and ends what they left open; returns how many turns they held.
    fn replay_events(&mut self, events: Vec<(u64, Event)>) -> usize {
        let mut turns = 0usize;
        for (at, event) in events {
            let begin = matches!(event, Event::ToolCallBegin { .. });
            turns += usize::from(matches!(event, Event::TurnStarted { .. }));
            self.apply(event);
            if begin && let Some(call) = self.calls.last_mut() {
                call.started_at = SystemTime::UNIX_EPOCH + Duration::from_millis(at);
            }
        }
        self.settle();
        turns
    }

    /// Ends whatever the recording left open: a turn that never finished, a call that never ended, a prompt nobody
    /// answered.
    fn settle(&mut self) {
        let open: Vec<usize> = (0..self.calls.len())
            .filter(|&i| self.calls[i].status == CallStatus::Running)
            .collect();
        for i in open {
            self.calls[i].finish(ToolOutput::error(NEVER_ENDED), Duration::ZERO, None);
            if let Some(&cell) = self.call_cell.get(&i) {
                self.touch(cell);
            }
        }
        self.end_reasoning();
        self.settle_subagents();
        self.approvals.clear();
        self.approval_from.clear();
        self.status.busy = false;
        self.status.retry = None;
        self.status.turn_started = None;
    }

    /// A session recorded before events were kept: its user and assistant messages.
    fn replay_prose(&mut self, history: &[Message]) {
        if history.is_empty() {
            return;
        }
        for message in history {
            match message {
                Message::User { content, .. } => {
                    self.push(CellKind::User(content.clone()));
                }
                Message::Assistant { content, .. } if !content.trim().is_empty() => {
                    self.push(CellKind::Assistant {
                        text: content.clone(),
                        streaming: false,
                    });
                }
                _ => {}
            }
        }
        self.notice(
            format!(
                "resumed a session of {} messages; the model has the whole conversation",
                history.len()
            ),
            Level::Info,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tern_protocol::{ApprovalDecision, ApprovalRequest, FileDiff, ToolDetails, TurnEnd, Usage};

    fn user(text: &str) -> Message {
        Message::User {
            content: text.into(),
            images: vec![],
        }
    }

    /// A turn with an approved command and an edit, then a turn cut off while a command ran and a prompt waited.
    fn recorded() -> Vec<(u64, Event)> {
        let usage = Usage {
            input_tokens: 120,
            output_tokens: 30,
            ..Usage::default()
        };
        let edit = ToolOutput {
            details: ToolDetails::Diffs {
                diffs: vec![FileDiff::new("a.rs", Some("a\n".into()), Some("b\n".into()))],
            },
            ..ToolOutput::text("edited a.rs")
        };
        let events = vec![
            Event::TurnStarted {
                turn: 1,
                text: "fix it".into(),
            },
            Event::ToolCallBegin {
                call_id: "c1".into(),
                name: "exec".into(),
                kind: tern_protocol::ToolKind::Command,
                args: json!({"command": "cargo test"}),
            },
            Event::ApprovalRequest(ApprovalRequest {
                id: 1,
                call_id: "c1".into(),
                tool: "exec".into(),
                command: "cargo test".into(),
                cwd: "/w".into(),
                reason: "runs a command".into(),
                proposed_rules: Vec::new(),
                ..Default::default()
            }),
            Event::ApprovalDecided {
                id: 1,
                decision: ApprovalDecision::Deny {
                    feedback: Some("not now".into()),
                },
            },
            Event::ToolCallEnd {
                call_id: "c1".into(),
                name: "exec".into(),
                output: ToolOutput::error("denied"),
                duration_ms: 0,
                full_output_path: None,
            },
            Event::ToolCallBegin {
                call_id: "c2".into(),
                name: "edit_file".into(),
                kind: tern_protocol::ToolKind::Edit,
                args: json!({"path": "a.rs"}),
            },
            Event::ToolCallEnd {
                call_id: "c2".into(),
                name: "edit_file".into(),
                output: edit,
                duration_ms: 7,
                full_output_path: None,
            },
            Event::AssistantMessage {
                text: "Done.".into(),
                reasoning: None,
            },
            Event::TokenUsage {
                last: usage,
                total: usage,
                context: None,
            },
            Event::TurnFinished {
                reason: TurnEnd::Completed,
            },
            Event::TurnStarted {
                turn: 2,
                text: "run it".into(),
            },
            Event::ToolCallBegin {
                call_id: "c3".into(),
                name: "exec".into(),
                kind: tern_protocol::ToolKind::Command,
                args: json!({"command": "sleep 100"}),
            },
            Event::ApprovalRequest(ApprovalRequest {
                id: 2,
                call_id: "c3".into(),
                tool: "exec".into(),
                command: "sleep 100".into(),
                cwd: "/w".into(),
                reason: "runs a command".into(),
                proposed_rules: Vec::new(),
                ..Default::default()
            }),
        ];
        events
            .into_iter()
            .enumerate()
            .map(|(i, e)| (1_700_000_000_000 + i as u64 * 1000, e))
            .collect()
    }

    #[test]
    fn events_bring_back_panes_diffs_history_and_totals_and_nothing_stays_open() {
        let mut s = AppState::new();
        s.replay(&[], recorded());
        assert_eq!(s.calls.len(), 3);
        assert!(matches!(
            s.calls[1].output.as_ref().map(|o| &o.details),
            Some(ToolDetails::Diffs { diffs }) if diffs.len() == 1
        ));
        assert_eq!(
            s.calls[1].started_at,
            SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_005_000)
        );
        assert_eq!(s.calls[1].duration, Some(Duration::from_millis(7)));
        // The call cut off by the crash is ended, not spinning; the prompt is gone.
        assert_eq!(s.calls[2].status, CallStatus::Failed);
        assert!(s.approvals.is_empty() && !s.status.busy && !s.animating());
        assert_eq!(s.status.usage.input_tokens, 120);
        let texts: Vec<String> = s
            .cells
            .iter()
            .filter_map(|c| match &c.kind {
                CellKind::User(t) | CellKind::Assistant { text: t, .. } | CellKind::Notice { text: t, .. } => {
                    Some(t.clone())
                }
                _ => None,
            })
            .collect();
        assert!(
            texts.contains(&"denied: cargo test — \"not now\"".to_string()),
            "{texts:?}"
        );
        assert!(texts.contains(&"Done.".to_string()));
        assert!(
            texts
                .last()
                .is_some_and(|t| t.starts_with("resumed a session of 2 turns")),
            "{texts:?}"
        );
    }

    #[test]
    fn sessions_without_events_replay_as_prose() {
        let mut s = AppState::new();
        let answer = Message::Assistant {
            content: "hello".into(),
            reasoning: None,
            tool_calls: vec![],
        };
        s.replay(&[user("hi"), answer], Vec::new());
        assert!(matches!(&s.cells[0].kind, CellKind::User(t) if t == "hi"));
        assert!(matches!(&s.cells[1].kind, CellKind::Assistant { text, .. } if text == "hello"));
        assert!(matches!(&s.cells[2].kind, CellKind::Notice { text, .. } if text.starts_with("resumed")));
        assert!(s.calls.is_empty());
    }
}
