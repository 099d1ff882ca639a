//! Compaction: keeping the conversation inside the model's context window. Before each request the prompt is
//! measured (the provider's last count plus an estimate of what was added since, so a step costs O(new messages));
//! past `compact_at` of the window, old tool results give way to notes saying how to get them again, and if that is
//! not enough the model summarises the older turns into one message while the most recent ones stay verbatim. The
//! same runs on `/compact [focus]` (summary only, with the user's focus) and once after the provider reports a
//! context overflow. Every change goes through `Session::replace_messages`, so the session log keeps the originals and
//! a resumed session gets the compacted conversation. A summary that fails or is interrupted changes nothing.
//!
//! It never drops a message without a summary of it, and never separates a tool call from its result.

pub(crate) mod plan;
#[cfg(test)]
mod tests;

use crate::context::{estimate_tokens, message_tokens};
use crate::conversation::Conversation;

/// When and how far the conversation is compacted (`[compaction]`-level settings: `compact_at`, `keep_recent`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Compaction {
    /// Compact when the prompt reaches this share of the context window.
    pub compact_at: f64,
    /// The most recent messages filling up to this share of the window stay verbatim.
    pub keep_recent: f64,
}

impl Default for Compaction {
    fn default() -> Self {
        Self {
            compact_at: 0.8,
            keep_recent: 0.3,
        }
    }
}

pub use plan::SUMMARY_HEADER;

/// The summariser's instructions.
pub(crate) const SUMMARY_PROMPT: &str = include_str!("../../../assets/compact_prompt.md");

/// The longest summary asked for, in tokens.
pub(crate) const SUMMARY_MAX_TOKENS: u64 = 8_192;

/// How many messages the conversation must grow by after a failed summary before the threshold asks for another:
/// a summariser that fails should not double every step's requests.
pub(crate) const SUMMARY_RETRY_AFTER: usize = 10;

/// The prompt's size as last measured: `tokens` for the first `upto` messages (system prompt and tools included).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct ContextMeter {
    tokens: u64,
    upto: usize,
    valid: bool,
    /// After a failed summary, the conversation length before which the threshold does not ask again.
    summary_not_before: usize,
    /// A server's count was doubted already (the user is told once).
    doubted: bool,
}

/// tern's estimate errs high, but not by more than this factor: a server's count further below it (a fixed number, a
/// count of part of the prompt) is no measure of the prompt.
const DOUBT_FACTOR: u64 = 3;

/// What the meter made of a server's count of a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Count {
    /// The measure now.
    Taken,
    /// The server reported none: the estimate stays in charge.
    Missing,
    /// Far below the estimate: the estimate stays in charge. `first`: the first such count of the session.
    Doubted { first: bool },
}

impl ContextMeter {
    /// Forgets the measure: the conversation was rewritten, so the next one estimates it whole.
    pub(crate) fn invalidate(&mut self) {
        self.valid = false;
    }

    fn set(&mut self, tokens: u64, upto: usize) {
        self.tokens = tokens;
        self.upto = upto;
        self.valid = true;
    }

    /// The prompt's size in tokens: the provider's count for what it last received plus an estimate of the messages
    /// added since. Only the new messages are walked.
    pub(crate) fn measure(&mut self, messages: &Conversation, system_prompt: &str, tools_json_len: usize) -> u64 {
        let len = messages.len();
        if !self.valid || len < self.upto {
            // The conversation keeps its own running estimate: no walk of the whole history here either.
            let tokens = estimate_tokens(&[], system_prompt, tools_json_len) + messages.estimated_tokens();
            self.set(tokens, len);
        } else if len > self.upto {
            self.tokens += messages[self.upto..].iter().map(message_tokens).sum::<u64>();
            self.upto = len;
        }
        self.tokens
    }

    /// Takes the provider's count of the prompt it just answered, which held the first `sent` of `len` messages and
    /// which tern estimated at `estimate` tokens, unless the count cannot be right.
    pub(crate) fn counted(&mut self, input_tokens: u64, sent: usize, len: usize, estimate: u64) -> Count {
        if input_tokens == 0 || sent > len {
            return Count::Missing;
        }
        if input_tokens.saturating_mul(DOUBT_FACTOR) < estimate {
            // Measured afresh from the estimate next time, not from a base the server got wrong.
            self.invalidate();
            let first = !self.doubted;
            self.doubted = true;
            return Count::Doubted { first };
        }
        self.set(input_tokens, sent);
        Count::Taken
    }

    /// One message was replaced in place by one `saved` tokens smaller, in a conversation of `len` messages: the
    /// measure is adjusted rather than estimated again.
    pub(crate) fn shrunk(&mut self, saved: u64, len: usize) {
        self.set(self.tokens.saturating_sub(saved), len);
    }

    /// A summary failed with the conversation `len` messages long: the threshold waits for it to grow a little.
    pub(crate) fn summary_failed(&mut self, len: usize) {
        self.summary_not_before = len + SUMMARY_RETRY_AFTER;
    }

    /// Whether the threshold may ask for a summary of a conversation `len` messages long.
    pub(crate) fn may_summarise(&self, len: usize) -> bool {
        len >= self.summary_not_before
    }
}

/// Why compaction runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trigger {
    /// The prompt passed `compact_at` of the window.
    Threshold,
    /// The provider said the prompt does not fit: compact as far as possible.
    Overflow,
    /// `/compact`: summarise now.
    Manual,
}

/// The notice of a compaction by `trigger` that summarised `summarised` messages and cleared `cleared` results,
/// taking the prompt from `before` to `after` tokens.
pub(crate) fn compacted_notice(trigger: Trigger, summarised: usize, cleared: usize, before: u64, after: u64) -> String {
    let mut what = Vec::new();
    if summarised > 0 {
        what.push(format!("summarised {summarised} earlier message(s)"));
    }
    if cleared > 0 {
        what.push(format!("replaced {cleared} old tool result(s) with notes"));
    }
    let why = match trigger {
        Trigger::Threshold => "to fit the context window",
        Trigger::Overflow => "after the provider said the conversation does not fit",
        Trigger::Manual => "on request",
    };
    format!(
        "compacted the conversation {why}: {}; ~{} → ~{} tokens (saved ~{})",
        what.join(" and "),
        before,
        after,
        before.saturating_sub(after)
    )
}
