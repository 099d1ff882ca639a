//! Live processes: commands the model started in the background (`exec` with `background: true`), which keep running
//! after their call returns until they exit, are stopped, or the session ends.
//!
//! The agent owns them; a frontend learns of them through `Event::ProcessStarted`, `Event::ProcessOutput` and
//! `Event::ProcessExited`, and the user may type into one (`Op::ProcessInput`), resize its terminal
//! (`Op::ProcessResize`) or stop it (`Op::ProcessStop`). What the user types goes to the process unasked: the user
//! chose it. What the model writes to one (a tool call) takes the tool road like any call.

use serde::{Deserialize, Serialize};

/// A live process as a frontend shows it (`/ps`, its pane).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessInfo {
    /// How the model and the user name it: `p1`, `p2`, … in the order they started in this session.
    pub id: String,
    /// The call that started it.
    pub call_id: String,
    /// The command as approved (the text the approval prompt showed).
    pub command: String,
    /// Whether it runs on a pseudo-terminal (its output may hold escape codes: colours, cursor moves, progress bars,
    /// for a terminal emulator to render) or on plain pipes (text lines).
    pub pty: bool,
    /// The terminal's size it was started with (a frontend may change it with `Op::ProcessResize`).
    pub cols: u16,
    pub rows: u16,
}

/// How a live process ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "how", rename_all = "snake_case")]
pub enum ProcessEnd {
    /// It exited by itself with this code.
    Exited { code: i32 },
    /// It was killed by this signal (not by tern).
    Signalled { signal: i32 },
    /// tern stopped it: the model's or the user's stop, or the session's end.
    Stopped { by: String },
    /// It could not be waited for (the reason).
    Lost { reason: String },
}
