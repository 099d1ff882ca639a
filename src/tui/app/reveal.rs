//! Slash command output brought into view. A command's output lands at the end of the transcript; read while scrolled
//! up, it would land out of sight. What a command prints at once is shown at once; for the commands the agent answers
//! later (`/context`, `/undo`, ...), the next notice it sends is shown when it arrives.

use super::App;
use tern_protocol::Event;

/// Commands answered by the agent with a notice (or a report) after the command returns.
const ANSWERED_LATER: &[&str] = &["context", "remember", "undo", "compact"];

impl App {
    /// Runs a slash command and scrolls to what it printed.
    pub(super) fn run_command(&mut self, name: &str, args: &str) {
        let before = self.state.cells.len();
        self.command(name, args);
        if self.state.cells.len() > before {
            self.transcript.show_cell(before);
        } else if ANSWERED_LATER.contains(&name) {
            self.awaiting_reply = true;
        }
    }

    /// After an event was applied: if it is the answer to a command and added cells from `before` on, show them.
    pub(super) fn reveal_reply(&mut self, answer: bool, before: usize) {
        if answer && self.awaiting_reply && self.state.cells.len() > before {
            self.awaiting_reply = false;
            self.transcript.show_cell(before);
        }
    }
}

/// Whether an event can be the answer to a command (the ones a turn sends are never awaited: a turn clears the wait).
pub(super) fn is_answer(event: &Event) -> bool {
    matches!(
        event,
        Event::Notice { .. } | Event::Error { .. } | Event::ContextReport(_)
    )
}
