//! The agent's `/undo` and `/rewind`: revert the work tree through the checkpoints, cut the conversation back (and
//! record the cut in the session log), show the diff applied as a pane like an edit's, and tell the model in the next
//! turn what the user reverted. Only run between turns (the runner refuses them while a turn runs).

use serde_json::json;

use super::Session;
use crate::checkpoint::Revert;
use crate::checkpoint::TurnRecord;
use tern_protocol::{Event, Op, RewindPoint, ToolDetails, ToolOutput};

impl Session {
    /// Reverts the newest turn whose changes are still in the work tree. Turns that changed nothing are passed over.
    pub(crate) async fn undo(&mut self, force: bool) {
        loop {
            let records = self.checkpoints.records();
            let Some(record) = records.iter().rev().find(|r| r.code).cloned() else {
                self.shared.emit(Event::Notice {
                    text: "nothing to undo: no turn of this session changed files that are still changed".into(),
                });
                return;
            };
            let revert = self.checkpoints.plan(std::slice::from_ref(&record)).await;
            if revert.changes.is_empty() && revert.conflicts.is_empty() && revert.unreadable.is_empty() {
                self.checkpoints.apply(&revert);
                if revert.commands_not_undone {
                    self.shared.emit(Event::Notice {
                        text: format!(
                            "turn {} ran commands without a work-tree snapshot (not a git repository, or snapshots \
                             off): what they changed cannot be undone",
                            record.turn
                        ),
                    });
                }
                continue;
            }
            if !force && !revert.conflicts.is_empty() {
                self.shared.emit(Event::ConfirmRevert {
                    files: revert.conflicts,
                    retry: Op::Undo { force: true },
                });
                return;
            }
            let files = self.revert_files(&revert, &format!("undo of turn {}", record.turn));
            self.pending_note = Some(format!(
                "[The user undid your changes of turn {} with /undo: {} back as they were before it. Do not redo \
                 them unless asked.]",
                record.turn,
                if files.is_empty() {
                    "the files are".to_string()
                } else {
                    files.join(", ") + " are"
                }
            ));
            return;
        }
    }

    /// Sends the turns `/rewind` can go back to.
    pub(crate) fn rewind_points(&self) {
        let records = self.checkpoints.records();
        let points = records
            .iter()
            .enumerate()
            .filter_map(|(k, r)| {
                let code = records[k..].iter().any(|later| later.code);
                (r.messages.is_some() || code).then(|| RewindPoint {
                    turn: r.turn,
                    text: r.text.clone(),
                    conversation: r.messages.is_some(),
                    code,
                })
            })
            .collect();
        self.shared.emit(Event::RewindPoints { points });
    }

    /// Goes back to before the user message of `turn`.
    pub(crate) async fn rewind(&mut self, turn: u64, conversation: bool, code: bool, force: bool) {
        let records = self.checkpoints.records();
        let Some(k) = records.iter().position(|r| r.turn == turn) else {
            self.shared.emit(Event::Notice {
                text: format!("turn {turn} cannot be rewound to"),
            });
            return;
        };
        let chosen = records[k].clone();
        if conversation && chosen.messages.is_none() {
            self.shared.emit(Event::Notice {
                text: "that message is no longer in the conversation (rewound, compacted or a new conversation)".into(),
            });
            return;
        }
        let mut revert = None;
        if code {
            let later: Vec<TurnRecord> = records[k..].iter().rev().filter(|r| r.code).cloned().collect();
            let planned = self.checkpoints.plan(&later).await;
            if !force && !planned.conflicts.is_empty() {
                self.shared.emit(Event::ConfirmRevert {
                    files: planned.conflicts,
                    retry: Op::Rewind {
                        turn,
                        conversation,
                        code,
                        force: true,
                    },
                });
                return;
            }
            revert = Some(planned);
        }
        if let Some(messages) = chosen.messages.filter(|_| conversation) {
            let turns = records[k..].iter().filter(|r| r.messages.is_some()).count();
            self.messages.truncate(messages);
            self.shared.write_log(|log| log.rewind(messages, chosen.events));
            self.shared.set_recorded_events(chosen.events);
            // The log's rewind line does the same to the recorded records when they are loaded.
            self.checkpoints.messages_cut(messages);
            // A note about an undo of a turn that is gone is no longer true.
            self.pending_note = None;
            self.shared.emit(Event::Rewound {
                turns,
                text: chosen.text.clone(),
            });
        }
        let what = match (conversation, code) {
            (true, true) => "code and conversation",
            (true, false) => "conversation",
            _ => "code",
        };
        let first_line: String = chosen.text.lines().next().unwrap_or("").chars().take(60).collect();
        let files = match &revert {
            Some(revert) => self.revert_files(revert, &format!("rewind of the {what} to \"{first_line}\"")),
            None => Vec::new(),
        };
        self.shared.emit(Event::Notice {
            text: format!("rewound the {what} to before \"{first_line}\""),
        });
        if code && !conversation {
            self.pending_note = Some(format!(
                "[The user put the files back as they were before their message \"{first_line}\" with /rewind{}. \
                 Changes made since then are gone from the work tree.]",
                if files.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", files.join(", "))
                }
            ));
        }
    }

    /// Applies a revert, shows its diff as a pane, and says what could not be undone. Returns the files reverted.
    fn revert_files(&mut self, revert: &Revert, title: &str) -> Vec<String> {
        let (diffs, failed) = self.checkpoints.apply(revert);
        for diff in &diffs {
            if let Ok(path) = self.policy.resolve(&diff.path) {
                self.files.forget(&path);
            }
        }
        let files: Vec<String> = diffs.iter().map(|d| d.path.clone()).collect();
        let call_id = format!(
            "{}-{}",
            title.split_whitespace().next().unwrap_or("undo"),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis())
                .unwrap_or(0)
        );
        let mut text = if files.is_empty() {
            format!("{title}: no file needed a change")
        } else {
            format!("{title}: reverted {}", files.join(", "))
        };
        if !failed.is_empty() {
            text.push_str(&format!("\nnot written: {}", failed.join("; ")));
        }
        if !revert.unreadable.is_empty() {
            text.push_str(&format!(
                "\nno earlier content to restore for: {}",
                revert.unreadable.join(", ")
            ));
        }
        if revert.commands_not_undone {
            text.push_str(
                "\ncommands ran without a work-tree snapshot (not a git repository, or snapshots off): what they \
                 changed is not undone",
            );
        }
        self.shared.emit(Event::ToolCallBegin {
            call_id: call_id.clone(),
            name: "undo".into(),
            kind: tern_protocol::ToolKind::Edit,
            args: json!({ "path": files.join(", ") }),
        });
        self.shared.emit(Event::ToolCallEnd {
            call_id,
            name: "undo".into(),
            output: ToolOutput::text(text.clone()).with_details(ToolDetails::Diffs { diffs }),
            duration_ms: 0,
            full_output_path: None,
        });
        // The pane says what was reverted; what was not is worth a line of its own.
        if let Some((_, problems)) = text.split_once('\n') {
            self.shared.emit(Event::Notice {
                text: problems.replace('\n', "; "),
            });
        }
        files
    }
}
