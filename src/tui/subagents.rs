//! The app's side of subagents: opening a subagent's transcript from its `spawn` call, and the keys while it shows.

use crossterm::event::KeyEvent;

use super::app::App;
use super::view::subagent::{SubagentViewer, ViewerKey};

impl App {
    /// Shows the transcript of the subagent that call `index` started, when it is a `spawn` call; `false` otherwise.
    pub(super) fn open_subagent(&mut self, index: usize) -> bool {
        let Some(id) = self.state.subagent_of_call(index) else {
            return false;
        };
        // After a resume this reads the subagent's own log, once.
        let host = self.host.clone();
        self.state.subagent_transcript(&id, |path| host.transcript(path));
        self.viewer = Some(SubagentViewer::new(id));
        true
    }

    /// A key for the open subagent transcript; `true` when it took it.
    pub(super) fn viewer_key(&mut self, key: KeyEvent) -> bool {
        let Some(viewer) = &mut self.viewer else {
            return false;
        };
        match viewer.handle_key(key, &self.keymap) {
            ViewerKey::Close => {
                self.viewer = None;
                true
            }
            ViewerKey::Consumed => true,
            ViewerKey::Ignored => false,
        }
    }
}

#[cfg(test)]
mod tests;
