//! A live process with the keys: its whole emulated screen over the transcript, every key sent to it as terminal
//! bytes (`key_bytes`), a paste as one (bracketed when the program asked), until the give-back key (Ctrl+]). Its
//! terminal follows the view's size (`Op::ProcessResize`); given back, it returns to the size it started with, which
//! its pane shows.
//!
//! Layers still come first (an approval prompt that opens meanwhile gets the keys it asks for).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::widgets::Clear;

use super::App;
use crate::key_bytes::{self, GIVE_BACK};
use crate::view::live_screen;
use tern_protocol::Op;

/// The process that has the keys, and the size its terminal was last given for the view.
pub(crate) struct Focus {
    pub(crate) id: String,
    sized: Option<(u16, u16)>,
}

impl App {
    /// Gives the keys to live process `id`.
    pub fn focus_process(&mut self, id: &str) {
        if self.state.processes.get(id).is_none() {
            self.state.flash(format!("no live process {}", tern_text::one_line(id)));
            return;
        }
        self.layers.clear();
        self.focus = Some(Focus {
            id: id.to_string(),
            sized: None,
        });
    }

    /// The process that has the keys, if any.
    pub(crate) fn focused_process(&self) -> Option<&str> {
        self.focus.as_ref().map(|f| f.id.as_str())
    }

    /// The keys come back to tern; the process's terminal returns to its own size.
    fn give_back(&mut self) {
        let Some(focus) = self.focus.take() else {
            return;
        };
        let Some(process) = self.state.processes.get(&focus.id) else {
            return;
        };
        let (cols, rows, running) = (process.info.cols, process.info.rows, process.running());
        if focus.sized.is_some() && running {
            self.state.resize_process(&focus.id, cols, rows);
            self.send(Op::ProcessResize {
                id: focus.id,
                cols,
                rows,
            });
        }
    }

    /// A key while a process has the keys: sent to it, or the give-back key. True when it was taken.
    pub(super) fn focus_key(&mut self, key: crossterm::event::KeyEvent) -> bool {
        let Some(id) = self.focused_process().map(str::to_string) else {
            return false;
        };
        let Some(process) = self.state.processes.get(&id) else {
            self.focus = None;
            return false;
        };
        // Once it ended, any key gives the keys back: nothing reads them any more.
        if key_bytes::gives_back(&key) || !process.running() {
            self.give_back();
            return true;
        }
        if let Some(data) = key_bytes::encode(&key, process.screen().application_cursor()) {
            self.send(Op::ProcessInput { id, data });
        }
        true
    }

    /// A paste while a process has the keys: sent as it is. True when it was taken.
    pub(super) fn focus_paste(&mut self, text: &str) -> bool {
        let Some(id) = self.focused_process().map(str::to_string) else {
            return false;
        };
        let Some(process) = self.state.processes.get(&id).filter(|p| p.running()) else {
            return true;
        };
        let data = key_bytes::paste(text, process.screen().bracketed_paste());
        self.send(Op::ProcessInput { id, data });
        true
    }

    /// Drops the focus when its process is gone (another session came on screen with `/resume`: its state knows no
    /// such process). Before a frame, so no part of it shows a focus that is not there.
    pub(super) fn forget_gone_focus(&mut self) {
        if let Some(focus) = &self.focus
            && self.state.processes.get(&focus.id).is_none()
        {
            self.focus = None;
        }
    }

    /// Draws the focused process over `area` (all but the status bar): a header, then its screen. A view of another
    /// size than its terminal resizes the terminal first.
    pub(super) fn render_focus(&mut self, frame: &mut Frame<'_>, area: Rect) {
        let Some(id) = self.focused_process().map(str::to_string) else {
            return;
        };
        let screen_area = Rect {
            y: area.y + 1,
            height: area.height.saturating_sub(1),
            ..area
        };
        self.fit_focused(&id, screen_area.width, screen_area.height);
        frame.render_widget(Clear, area);
        let Some(process) = self.state.processes.get(&id) else {
            return;
        };
        let extra = format!(" · {GIVE_BACK} gives the keys back");
        let header = live_screen::header(process, area.width, &self.theme, &extra);
        frame.buffer_mut().set_line(area.x, area.y, &header, area.width);
        live_screen::draw(process.screen(), screen_area, frame.buffer_mut());
        // The terminal's own cursor goes where the program's is (not left in the composer under this view).
        let (row, col) = process.screen().cursor_position();
        if screen_area.width > 0 && screen_area.height > 0 {
            frame.set_cursor_position((
                screen_area.x + col.min(screen_area.width - 1),
                screen_area.y + row.min(screen_area.height - 1),
            ));
        }
    }

    /// The focused process's terminal takes the view's size (once per size: a size the emulator bounds is not asked
    /// again every frame).
    fn fit_focused(&mut self, id: &str, cols: u16, rows: u16) {
        let Some(focus) = self.focus.as_mut() else {
            return;
        };
        if focus.sized == Some((cols, rows)) || cols == 0 || rows == 0 {
            return;
        }
        focus.sized = Some((cols, rows));
        let running = self.state.processes.get(id).is_some_and(|p| p.running());
        if !running {
            return;
        }
        if let Some((cols, rows)) = self.state.resize_process(id, cols, rows) {
            self.send(Op::ProcessResize {
                id: id.to_string(),
                cols,
                rows,
            });
        }
    }

    /// The status bar's hint while a process has the keys.
    pub(super) fn focus_hint(&self) -> Option<String> {
        let id = self.focused_process()?;
        Some(format!(
            "keys go to {} · {GIVE_BACK} gives them back",
            tern_text::one_line(id)
        ))
    }
}
