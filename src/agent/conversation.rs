//! The conversation the agent holds, with what each request needs from it kept alongside so a step does not redo it
//! for the whole history: each message's wire form (made once by the provider, reused by every later request) and
//! its token estimate. Every change goes through `push`, `replace`, `truncate` or `clear`, which keep those in step
//! with the messages (a replaced range is encoded again, nothing else) and give the conversation a new `History`
//! when a message already in it changes, so the provider can grow its last body by what was pushed since without
//! looking at the messages before (`tern_provider::History`).
//!
//! The conversation stays one the API accepts as it grows (every tool call answered, in call order, before the next
//! request); `ensure_valid` checks only what was added since the last check, and repairs the whole only when that
//! check fails (an interrupted turn, a loaded session). Reading goes through `Deref` to `[Message]`.

use std::ops::Deref;

use super::context;
use tern_protocol::Message;
use tern_provider::{Encoded, History, Provider};

#[derive(Debug)]
pub(crate) struct Conversation {
    messages: Vec<Message>,
    /// `encoded[i]` is the current provider's wire form of `messages[i]`, once a request has needed it.
    encoded: Vec<Option<Encoded>>,
    /// `messages[..offered]` have been given to the provider's `encode` (their slot holds what it returned).
    offered: usize,
    /// New whenever a message already here is replaced or dropped; the same while messages are only pushed.
    history: History,
    /// `tokens[i]` is an estimate for `messages[i]` that errs high (see `estimated_tokens`).
    tokens: Vec<u64>,
    total_tokens: u64,
    /// `messages[..valid]` are known to be what `context::repair` would leave unchanged.
    valid: usize,
}

impl Default for Conversation {
    fn default() -> Self {
        Self {
            messages: Vec::new(),
            encoded: Vec::new(),
            offered: 0,
            history: History::new(),
            tokens: Vec::new(),
            total_tokens: 0,
            valid: 0,
        }
    }
}

impl Deref for Conversation {
    type Target = [Message];

    fn deref(&self) -> &[Message] {
        &self.messages
    }
}

impl Conversation {
    /// A conversation from loaded messages, repaired whole.
    pub(crate) fn new(messages: Vec<Message>) -> Self {
        let mut conversation = Self::default();
        conversation.extend(context::repair(&messages));
        conversation.valid = conversation.messages.len();
        conversation
    }

    pub(crate) fn push(&mut self, message: Message) {
        self.extend(std::iter::once(message));
    }

    fn extend(&mut self, messages: impl IntoIterator<Item = Message>) {
        for message in messages {
            let tokens = estimate(&message);
            self.total_tokens += tokens;
            self.tokens.push(tokens);
            self.encoded.push(None);
            self.messages.push(message);
        }
    }

    /// Replaces messages `from..to` with `with` (clamped to the conversation); the wire forms of the others stay.
    pub(crate) fn replace(&mut self, from: usize, to: usize, with: Vec<Message>) {
        let to = to.min(self.messages.len());
        let from = from.min(to);
        let removed: u64 = self.tokens[from..to].iter().sum();
        let tokens: Vec<u64> = with.iter().map(estimate).collect();
        self.total_tokens = self.total_tokens - removed + tokens.iter().sum::<u64>();
        self.tokens.splice(from..to, tokens);
        self.encoded.splice(from..to, std::iter::repeat_n(None, with.len()));
        self.offered = self.offered.min(from);
        if from < self.messages.len() {
            self.history = History::new();
        }
        self.messages.splice(from..to, with);
        // What follows the replaced range may now answer (or lack) different calls: check it again, from the call
        // that the first replaced message may answer.
        let mut clean = self.valid.min(from);
        while clean > 0 && matches!(self.messages[clean - 1], Message::Tool { .. }) {
            clean -= 1;
        }
        if clean > 0
            && matches!(&self.messages[clean - 1], Message::Assistant { tool_calls, .. } if !tool_calls.is_empty())
        {
            clean -= 1;
        }
        self.valid = clean;
    }

    /// Keeps the first `len` messages.
    pub(crate) fn truncate(&mut self, len: usize) {
        let len = len.min(self.messages.len());
        self.replace(len, self.messages.len(), Vec::new());
    }

    pub(crate) fn clear(&mut self) {
        *self = Self::default();
    }

    /// Makes sure the conversation is one the API accepts, checking only what changed since the last time; when the
    /// check fails, the whole is repaired (orphans dropped, lost answers marked) and every wire form made again.
    pub(crate) fn ensure_valid(&mut self) {
        let start = self.valid.min(self.messages.len());
        if answered(&self.messages[start..]) {
            self.valid = self.messages.len();
            return;
        }
        let repaired = context::repair(&self.messages);
        *self = Self::default();
        self.extend(repaired);
        self.valid = self.messages.len();
    }

    /// Encodes the messages added or replaced since the last call; the forms are borrowed by the next request. One
    /// conversation is encoded by one provider.
    pub(crate) fn encode_with(&mut self, provider: &dyn Provider) -> &[Option<Encoded>] {
        for (message, slot) in self.messages[self.offered..]
            .iter()
            .zip(&mut self.encoded[self.offered..])
        {
            *slot = provider.encode(message);
        }
        self.offered = self.messages.len();
        &self.encoded
    }

    /// Which conversation this is, for the provider's kept body (see the module's documentation).
    pub(crate) fn history(&self) -> History {
        self.history
    }

    /// The wire forms made so far, by message index.
    pub(crate) fn encoded(&self) -> &[Option<Encoded>] {
        &self.encoded
    }

    /// A token estimate for the messages that is at least `context::estimate_tokens` for them (each message's estimate
    /// is rounded up), kept as the conversation changes.
    pub(crate) fn estimated_tokens(&self) -> u64 {
        self.total_tokens
    }
}

/// One message's share of `context::estimate_tokens`, rounded up so the sum never undercounts.
fn estimate(message: &Message) -> u64 {
    context::message_tokens(message) + 1
}

/// Whether `messages`, starting where no call is waiting for its answer, is what `context::repair` leaves unchanged:
/// no result without its call, and each assistant message with calls followed by exactly one result per call, in
/// call order.
fn answered(messages: &[Message]) -> bool {
    let mut i = 0;
    while i < messages.len() {
        match &messages[i] {
            Message::Tool { .. } => return false,
            Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => {
                let distinct = tool_calls
                    .iter()
                    .enumerate()
                    .all(|(k, call)| tool_calls[..k].iter().all(|earlier| earlier.id != call.id));
                let results = messages.get(i + 1..i + 1 + tool_calls.len()).filter(|_| distinct);
                let in_order = results.is_some_and(|results| {
                    results
                        .iter()
                        .zip(tool_calls)
                        .all(|(result, call)| matches!(result, Message::Tool { call_id, .. } if *call_id == call.id))
                });
                if !in_order {
                    return false;
                }
                i += 1 + tool_calls.len();
            }
            _ => i += 1,
        }
    }
    true
}

#[cfg(test)]
mod tests;
