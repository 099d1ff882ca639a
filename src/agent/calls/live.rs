//! A running command's output as the user sees it live: SGR colours kept for the pane, every other escape sequence
//! dropped, registered secrets masked. Masking looks at the text without escapes, so a colour code inside a key cannot
//! hide it; a chunk that holds a secret is shown plain (masked, without its colours). A sequence cut off at the end
//! of a chunk waits for the next one, so its first half never shows up as text.

use std::borrow::Cow;

use tern_text::ansi;

/// A cut-off sequence longer than this is not waited for: it is dropped (an OSC that never ends).
const MAX_PENDING: usize = 4096;

#[derive(Default)]
pub(super) struct LiveOutput {
    /// The start of an escape sequence the last chunk ended in.
    pending: String,
}

impl LiveOutput {
    /// What of `chunk` (after what the last one left) the pane gets now; empty when nothing is complete yet.
    pub(super) fn shown(&mut self, chunk: &str) -> String {
        let mut text = std::mem::take(&mut self.pending);
        text.push_str(chunk);
        if let Some(at) = ansi::incomplete_tail(&text) {
            if text.len() - at <= MAX_PENDING {
                self.pending = text[at..].to_string();
            }
            text.truncate(at);
        }
        let plain = ansi::strip(&text);
        match tern_secrets::mask(&plain) {
            Cow::Borrowed(_) => ansi::only_sgr(&text).into_owned(),
            Cow::Owned(masked) => masked,
        }
    }
}

#[cfg(test)]
mod tests;
