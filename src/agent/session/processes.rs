//! The session's side of live processes: the model is told of their exits at its next request. (The table itself is
//! in the shared state; the ops on it are sorted in `ops.rs`, and the session's end stops them.)

use super::Session;
use tern_protocol::Message;

impl Session {
    /// Tells the model of the live processes that exited since its last request (the main agent only): one short
    /// note each, as a user message before the request. No turn starts for them.
    pub(crate) fn deliver_process_exits(&mut self) {
        let exits = self.shared.process_exits();
        if !exits.is_empty() {
            self.push_message(Message::User {
                content: exits.join("\n"),
                images: Vec::new(),
            });
        }
    }
}
