//! Layers: modal views stacked over the transcript (approval prompt, history browser, diff view, help). A key goes to
//! the top layer first; a layer answers `Consumed` or `Ignored` and may ask for effects (close itself, push another
//! layer, send an op to the agent, jump to a call, copy text) that the app applies after dispatch, so no layer holds
//! a reference to the app.

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::Rect;

use super::state::calls::ToolCallState;
use super::state::processes::Processes;
use super::theme::Theme;
use tern_protocol::Op;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Handled {
    Consumed,
    Ignored,
}

/// What a layer asks the app to do.
pub(crate) enum Effect {
    /// Pop this layer.
    Close,
    /// Push a layer on top.
    Push(Box<dyn Layer>),
    /// Send an op to the agent.
    Op(Op),
    /// Close the layers and scroll the transcript to this call (by call id).
    JumpToCall(String),
    /// Copy text to the clipboard (OSC 52).
    Copy(String),
    /// A short message for the status line.
    Notice(String),
    /// Switch the UI to the session logged at this path (`/resume`).
    Switch(std::path::PathBuf),
    /// Restart the agent on this session with the configuration read again (after trusting the project).
    Reload,
    /// Give the keys to live process `id` (its focused view), closing the layers.
    Focus(String),
    /// Open this text in the user's `$EDITOR` (the TUI steps aside meanwhile); the result goes back to the top layer
    /// through `Layer::edited`.
    EditText(String),
}

/// What layers may read while handling input or drawing.
pub(crate) struct View<'a> {
    pub(crate) calls: &'a [ToolCallState],
    /// The session's live processes (`/ps`).
    pub(crate) processes: &'a Processes,
    pub(crate) theme: &'a Theme,
}

/// Input context: the view plus the effects asked for.
pub(crate) struct Ctx<'a> {
    pub(crate) view: View<'a>,
    pub(crate) effects: Vec<Effect>,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(view: View<'a>) -> Self {
        Self {
            view,
            effects: Vec::new(),
        }
    }

    pub(crate) fn effect(&mut self, effect: Effect) {
        self.effects.push(effect);
    }
}

/// What a layer answers for the session: the app raises and closes the prompts the session's state asks for by
/// this, never by a layer's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answers {
    /// Nothing: a view, a picker, a dialog of the UI's own.
    Nothing,
    /// The approval request at the front of the queue.
    Approval,
    /// The request for input (an MCP server's elicitation) with this id.
    Elicitation(u64),
}

pub(crate) trait Layer: Send {
    /// A short name, for tests.
    #[cfg(test)]
    fn name(&self) -> &'static str;
    fn handle_key(&mut self, key: KeyEvent, ctx: &mut Ctx<'_>) -> Handled;
    fn handle_paste(&mut self, _text: &str, _ctx: &mut Ctx<'_>) -> Handled {
        Handled::Ignored
    }
    /// Draws the layer; `area` is the whole screen (a layer picks its own part of it).
    fn render(&mut self, frame: &mut Frame<'_>, area: Rect, view: &View<'_>);
    /// What the layer answers for the session (`Answers::Nothing` unless it is a prompt the session asked for).
    fn answers(&self) -> Answers {
        Answers::Nothing
    }
    /// Told how many more requests of the kind it answers wait behind its own (the approval prompt shows "1 of N").
    fn set_waiting(&mut self, _behind: usize) {}
    /// True while the layer shows something animated or loading, so the app schedules another frame.
    fn animating(&self) -> bool {
        false
    }
    /// A layer docked above the composer (the approval prompt) says how many rows it wants at `width`; the app gives
    /// it rows between the transcript and the composer (as many as fit) and draws it there. `None`: drawn over the
    /// whole screen.
    fn dock_height(&mut self, _width: u16, _theme: &Theme) -> Option<u16> {
        None
    }
    /// The text the user saved in `$EDITOR` after this layer asked with `Effect::EditText` (`Err`: why not).
    fn edited(&mut self, _result: Result<String, String>, _ctx: &mut Ctx<'_>) {}
}
