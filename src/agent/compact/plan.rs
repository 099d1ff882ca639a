//! What compaction changes, decided without a model: where the older part of the conversation ends (never between a
//! tool call and its result), which old tool results give way to a note, and the transcript the summariser reads.

use crate::context::message_tokens;
use tern_protocol::{Message, ToolCall, ToolKind};

/// How the summary message begins, so a later compaction (and a person reading the session) knows it for one.
pub const SUMMARY_HEADER: &str = "[Summary of the earlier conversation, written by the assistant when the conversation \
     was compacted to fit the context window; only its Requests section says what the user asked]";

/// Results shorter than this are never compacted: the saving is not worth the lost information.
pub(crate) const COMPACT_MIN_CHARS: usize = 1_000;

/// How much of one tool result the summariser reads: enough to know what it said, not all of a large file.
const TRANSCRIPT_RESULT_CHARS: usize = 2_000;

/// Where the recent part of the conversation begins: the most recent messages that fit in `keep_tokens` stay
/// verbatim, the rest (`..split`) may be summarised. The split never separates a call from its results (the kept
/// part never begins with a tool result), and the last step (the last message that is not a tool result, and the
/// results after it) is always kept: the model is working with it. 0 means there is nothing older to summarise.
pub(crate) fn split_point(messages: &[Message], keep_tokens: u64) -> usize {
    let Some(last_step) = messages.iter().rposition(|m| !matches!(m, Message::Tool { .. })) else {
        return 0;
    };
    let mut kept = 0u64;
    let mut split = messages.len();
    while split > 0 {
        let size = message_tokens(&messages[split - 1]);
        if kept + size > keep_tokens {
            break;
        }
        kept += size;
        split -= 1;
    }
    let mut split = split.min(last_step);
    while matches!(messages.get(split), Some(Message::Tool { .. })) {
        split += 1;
    }
    split
}

/// Where the last turn begins: the last user message that is not a summary (0 when there is none).
pub(crate) fn last_turn_start(messages: &[Message]) -> usize {
    messages
        .iter()
        .rposition(|m| matches!(m, Message::User { .. }) && !is_summary(m))
        .unwrap_or(0)
}

/// Whether the summary already stands for everything before `split`: then summarising again gains nothing.
pub(crate) fn only_a_summary(messages: &[Message], split: usize) -> bool {
    split == 0 || (split == 1 && is_summary(&messages[0]))
}

fn is_summary(message: &Message) -> bool {
    matches!(message, Message::User { content, .. } if content.starts_with(SUMMARY_HEADER))
}

/// The summary message that replaces the older part of the conversation.
pub(crate) fn summary_message(summary: &str) -> Message {
    Message::User {
        content: format!("{SUMMARY_HEADER}\n\n{}", summary.trim()),
        images: Vec::new(),
    }
}

/// The indices of results before `protect_from` large enough to compact, oldest first.
pub(crate) fn compactable_results(messages: &[Message], protect_from: usize) -> Vec<usize> {
    messages
        .iter()
        .enumerate()
        .take(protect_from)
        .filter(|(_, m)| {
            matches!(m, Message::Tool { content, images, .. }
                if content.len() >= COMPACT_MIN_CHARS || !images.is_empty())
        })
        .map(|(i, _)| i)
        .collect()
}

/// The result at `index` with its content replaced by a note saying what the call was and how to get it again.
/// `kind_of` says what kind each tool is, by name. `None` when `index` is not a tool result.
pub(crate) fn compacted_result(
    messages: &[Message],
    index: usize,
    kind_of: impl Fn(&str) -> ToolKind,
) -> Option<Message> {
    let Message::Tool {
        call_id,
        name,
        content,
        is_error,
        ..
    } = messages.get(index)?
    else {
        return None;
    };
    let call = call_of(messages, index, call_id);
    let args = call
        .map(|c| c.arguments.to_string())
        .map(|a| clip(&a, 300))
        .unwrap_or_default();
    // Reads, searches, commands and fetches give their output again when called again.
    let again = if matches!(
        kind_of(name),
        ToolKind::Read | ToolKind::Search | ToolKind::Command | ToolKind::Fetch
    ) {
        "Call the tool again with the same arguments if you need it."
    } else {
        "Call the tool again only if doing so has no side effects."
    };
    Some(Message::Tool {
        call_id: call_id.clone(),
        name: name.clone(),
        content: format!(
            "[Output of {name} {args} ({} characters) was compacted to save context. {again}]",
            content.len()
        ),
        is_error: *is_error,
        images: Vec::new(),
    })
}

/// The call a result answers: in the assistant message of its step, just before the step's results.
fn call_of<'a>(messages: &'a [Message], index: usize, call_id: &str) -> Option<&'a ToolCall> {
    messages[..index].iter().rev().find_map(|m| match m {
        Message::Assistant { tool_calls, .. } => tool_calls.iter().find(|c| c.id == call_id),
        _ => None,
    })
}

/// The older messages as one text for the summariser: roles, tool calls with their arguments, results cut to their
/// start. At most `max_chars`: beyond that the first quarter and the last three quarters are kept, since the
/// beginning holds the request (or an earlier summary) and the end the state of the work.
pub(crate) fn transcript(messages: &[Message], max_chars: usize) -> String {
    let mut out = String::new();
    for message in messages {
        match message {
            Message::User { content, images } => {
                if content.starts_with(SUMMARY_HEADER) {
                    out.push_str("### Summary of what came before\n");
                    out.push_str(content.trim_start_matches(SUMMARY_HEADER).trim());
                } else {
                    out.push_str("### User\n");
                    out.push_str(content);
                }
                if !images.is_empty() {
                    out.push_str(&format!("\n[{} image(s) attached]", images.len()));
                }
            }
            Message::Assistant {
                content, tool_calls, ..
            } => {
                out.push_str("### Assistant\n");
                out.push_str(content);
                for call in tool_calls {
                    out.push_str(&format!(
                        "\n[calls {} {}]",
                        call.name,
                        clip(&call.arguments.to_string(), 1_000)
                    ));
                }
            }
            Message::Tool {
                name,
                content,
                is_error,
                ..
            } => {
                let what = if *is_error { "error" } else { "result" };
                out.push_str(&format!("### Tool {what} of {name}\n"));
                out.push_str(&clip(content, TRANSCRIPT_RESULT_CHARS));
            }
        }
        out.push_str("\n\n");
    }
    if out.len() <= max_chars {
        return out;
    }
    let head = floor(&out, max_chars / 4);
    let tail_start = ceil(&out, out.len() - (max_chars - head.len()));
    format!(
        "{head}\n\n[... {} characters of the conversation left out ...]\n\n{}",
        tail_start - head.len(),
        &out[tail_start..]
    )
}

/// The start of `text`, at most `max` bytes, with a note of how much was cut.
fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    format!("{} [... {} more characters]", floor(text, max), text.len() - max)
}

fn floor(text: &str, at: usize) -> &str {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    &text[..at]
}

fn ceil(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}
