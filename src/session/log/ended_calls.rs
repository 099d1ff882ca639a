//! What lets the session log write each tool output once: the calls whose end was recorded and whose result was
//! not, kept the same way by the writer and by the loader (see `EndedCalls`).

/// The `ToolCallEnd` events recorded since the conversation began (or was rewound) whose tool message has not been
/// recorded yet, by call id, with what the writer needs of them (their text) or the loader (where they are). The
/// writer and the loader keep it over the same lines in the same way, so a result the writer wrote without its text
/// finds the very event it was compared with: a later event of the same id replaces an earlier one, a tool message
/// takes its call's entry (whether it was written whole or not), and a reset or rewind empties it. The writer may
/// forget entries (`MAX_ENDED`): the result is then written whole. The loader never does.
pub(super) struct EndedCalls<T> {
    calls: std::collections::HashMap<String, T>,
}

impl<T> Default for EndedCalls<T> {
    fn default() -> Self {
        Self {
            calls: Default::default(),
        }
    }
}

/// Calls whose end was recorded without a result following (the `undo` panes) would otherwise pile up.
const MAX_ENDED: usize = 1024;

impl<T> EndedCalls<T> {
    pub(super) fn insert(&mut self, call_id: &str, value: T) {
        self.calls.insert(call_id.to_string(), value);
    }

    /// The writer's insert: forgetting is safe for the writer only (the loader must keep every entry, as it cannot
    /// know which ones a writer forgot, and a writer that forgot one writes that result whole).
    pub(super) fn insert_bounded(&mut self, call_id: &str, value: T) {
        if self.calls.len() >= MAX_ENDED && !self.calls.contains_key(call_id) {
            self.calls.clear();
        }
        self.insert(call_id, value);
    }

    pub(super) fn take(&mut self, call_id: &str) -> Option<T> {
        self.calls.remove(call_id)
    }

    pub(super) fn clear(&mut self) {
        self.calls.clear();
    }
}
