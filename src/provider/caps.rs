//! Size caps on one streamed answer: its text, its reasoning, and its tool calls' arguments. A model (or a server
//! pretending to be one) that streams without end must not fill memory until the process is killed; past a cap the
//! attempt ends with `ProviderError::TooLarge`, which is never retried, so the turn stops with a message that says
//! what grew too large. The stream handlers check before they append, so what is kept never passes a cap. This
//! module only measures; it does not decode or send anything.

use super::ProviderError;

const MB: usize = 1024 * 1024;

/// The longest answer text kept (a long answer is some 100 KB).
pub(crate) const MAX_ANSWER_BYTES: usize = 4 * MB;
/// The longest reasoning text kept.
pub(crate) const MAX_REASONING_BYTES: usize = 4 * MB;
/// The longest arguments of one tool call (a whole file written in one call is well below it).
pub(crate) const MAX_CALL_ARGUMENTS_BYTES: usize = MB;
/// The longest arguments of all the tool calls of one answer together.
pub(crate) const MAX_ALL_ARGUMENTS_BYTES: usize = 4 * MB;

/// What part of an answer grew.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    Answer,
    Reasoning,
    /// The arguments of one tool call.
    CallArguments,
    /// The arguments of every tool call so far.
    AllArguments,
}

impl Part {
    fn limit(self) -> usize {
        match self {
            Part::Answer => MAX_ANSWER_BYTES,
            Part::Reasoning => MAX_REASONING_BYTES,
            Part::CallArguments => MAX_CALL_ARGUMENTS_BYTES,
            Part::AllArguments => MAX_ALL_ARGUMENTS_BYTES,
        }
    }

    fn what(self) -> &'static str {
        match self {
            Part::Answer => "answer",
            Part::Reasoning => "reasoning",
            Part::CallArguments => "arguments of one tool call",
            Part::AllArguments => "tool-call arguments",
        }
    }
}

/// Ok when `adding` more bytes to a part that holds `current` stay within its cap.
pub(crate) fn fits(part: Part, current: usize, adding: usize) -> Result<(), ProviderError> {
    if current.saturating_add(adding) <= part.limit() {
        return Ok(());
    }
    tracing::warn!(
        part = part.what(),
        current,
        adding,
        "a streamed answer passed its size cap"
    );
    Err(ProviderError::TooLarge {
        what: part.what(),
        limit_mb: part.limit() / MB,
    })
}

/// Appends `text` to `buffer` when it fits `part`'s cap.
pub(crate) fn append(buffer: &mut String, text: &str, part: Part) -> Result<(), ProviderError> {
    fits(part, buffer.len(), text.len())?;
    buffer.push_str(text);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_up_to_the_cap_and_refuses_past_it() {
        let mut text = "a".repeat(MAX_ANSWER_BYTES - 1);
        append(&mut text, "b", Part::Answer).unwrap();
        assert_eq!(text.len(), MAX_ANSWER_BYTES);
        let err = append(&mut text, "c", Part::Answer).unwrap_err();
        assert_eq!(text.len(), MAX_ANSWER_BYTES, "nothing past the cap is kept");
        assert_eq!(err.to_string(), "the model's answer passed 4 MB; the turn was stopped");
        assert!(!err.is_retryable());
        let err = fits(Part::CallArguments, MAX_CALL_ARGUMENTS_BYTES, 1).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the model's arguments of one tool call passed 1 MB; the turn was stopped"
        );
    }
}
