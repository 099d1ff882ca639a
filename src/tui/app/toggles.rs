//! The keys that flip a view setting: Ctrl+R (reasoning) and F2 (mouse capture, carried out by the terminal loop).

use super::App;

impl App {
    /// The reasoning of the selected tool call, or with none selected, all of it.
    pub(super) fn toggle_reasoning(&mut self) {
        let near = (self.transcript.selected_call)
            .and_then(|i| self.state.calls.get(i))
            .and_then(|call| self.state.cell_of_call(&call.call_id));
        if !self.state.toggle_reasoning(near) {
            self.state.flash("no reasoning to show");
        }
    }

    /// Mouse capture off (the terminal selects text) or back on; the terminal loop sees the flag and tells the
    /// terminal.
    pub(super) fn toggle_mouse(&mut self) {
        let off = !self.state.status.mouse_off;
        self.state.status.mouse_off = off;
        self.state.flash(if off {
            "mouse capture off: select text with the mouse"
        } else {
            "mouse capture on: the wheel scrolls"
        });
    }
}
