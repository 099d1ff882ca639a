//! Context governance: what the model receives on each request is a repaired copy of the conversation. Orphan tool
//! results are dropped, every tool call is answered (a lost answer gets a marker), and when the prompt would overflow
//! the model's context budget the oldest large results of re-runnable tools are compacted to a one-line note. The
//! session's own record is never changed by this.

use std::collections::HashSet;

use crate::protocol::Message;

/// The answer given to a call whose result was lost (crash, interrupt, a bug).
pub const LOST_RESULT: &str = "[Tool result unavailable — call was interrupted or lost]";

/// Tools whose output can be had again by calling them again, so old output may be compacted.
const COMPACTABLE: &[&str] = &["read_file", "exec", "grep", "find_files", "list_dir", "web_fetch"];

/// Results shorter than this are never compacted: the saving is not worth the lost information.
const COMPACT_MIN_CHARS: usize = 1_000;

/// A rough token count: ~4 characters a token for code and English, which errs on the safe side for budgets.
pub fn estimate_tokens(messages: &[Message], system: &str, tools_json_len: usize) -> u64 {
    let chars: usize = system.len()
        + tools_json_len
        + messages
            .iter()
            .map(|m| match m {
                Message::User { content, images } => content.len() + images.len() * 4_000,
                Message::Assistant {
                    content,
                    reasoning,
                    tool_calls,
                } => {
                    content.len()
                        + reasoning.as_ref().map_or(0, |r| r.text.len())
                        + tool_calls
                            .iter()
                            .map(|c| c.name.len() + c.arguments.to_string().len() + 16)
                            .sum::<usize>()
                }
                Message::Tool { content, images, .. } => content.len() + images.len() * 4_000 + 16,
            })
            .sum::<usize>();
    (chars / 4) as u64
}

/// Makes the conversation one the API accepts: each tool result follows the assistant message that called it, every
/// call has exactly one result, in call order.
pub fn repair(messages: &[Message]) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    let mut i = 0;
    while i < messages.len() {
        match &messages[i] {
            Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => {
                out.push(messages[i].clone());
                // Gather the results that follow, then emit one per call in call order.
                let mut j = i + 1;
                let mut results: Vec<&Message> = Vec::new();
                while let Some(m @ Message::Tool { .. }) = messages.get(j) {
                    results.push(m);
                    j += 1;
                }
                let mut used = HashSet::new();
                for call in tool_calls {
                    let found = results.iter().find(|m| {
                        matches!(m, Message::Tool { call_id, .. } if *call_id == call.id && !used.contains(call_id))
                    });
                    match found {
                        Some(m) => {
                            used.insert(call.id.clone());
                            out.push((*m).clone());
                        }
                        None => out.push(Message::Tool {
                            call_id: call.id.clone(),
                            name: call.name.clone(),
                            content: LOST_RESULT.to_string(),
                            is_error: true,
                            images: Vec::new(),
                        }),
                    }
                }
                i = j;
            }
            // A result with no call right before it is an orphan: the API rejects it.
            Message::Tool { .. } => i += 1,
            other => {
                out.push(other.clone());
                i += 1;
            }
        }
    }
    out
}

/// Compacts the oldest large results of re-runnable tools until the estimate fits `budget` tokens. The newest
/// exchange (after the last user message) is left alone: the model is working with it. Returns how many results were
/// compacted.
pub fn compact_to_budget(messages: &mut [Message], system: &str, tools_json_len: usize, budget: u64) -> usize {
    let mut estimate = estimate_tokens(messages, system, tools_json_len);
    if estimate <= budget {
        return 0;
    }
    let protect_from = messages
        .iter()
        .rposition(|m| matches!(m, Message::User { .. }))
        .unwrap_or(messages.len());
    let mut compacted = 0;
    for message in messages.iter_mut().take(protect_from) {
        if estimate <= budget {
            break;
        }
        if let Message::Tool {
            name, content, images, ..
        } = message
            && COMPACTABLE.contains(&name.as_str())
            && content.len() >= COMPACT_MIN_CHARS
        {
            let note = format!(
                "[Earlier output of {name} compacted to save context ({} chars). Call the tool again if you need it.]",
                content.len()
            );
            let saved = (content.len() + images.len() * 4_000).saturating_sub(note.len()) / 4;
            *content = note;
            images.clear();
            estimate = estimate.saturating_sub(saved as u64);
            compacted += 1;
        }
    }
    compacted
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ToolCall;
    use serde_json::json;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "grep".into(),
            arguments: json!({}),
        }
    }

    fn result(id: &str, text: &str) -> Message {
        Message::Tool {
            call_id: id.into(),
            name: "grep".into(),
            content: text.into(),
            is_error: false,
            images: vec![],
        }
    }

    fn user(t: &str) -> Message {
        Message::User {
            content: t.into(),
            images: vec![],
        }
    }

    fn assistant(calls: Vec<ToolCall>) -> Message {
        Message::Assistant {
            content: String::new(),
            reasoning: None,
            tool_calls: calls,
        }
    }

    #[test]
    fn orphans_dropped_and_missing_backfilled_in_call_order() {
        let msgs = vec![
            user("hi"),
            result("zzz", "orphan"),
            assistant(vec![call("a"), call("b"), call("c")]),
            result("c", "C"),
            result("a", "A"),
            user("next"),
        ];
        let fixed = repair(&msgs);
        let ids: Vec<String> = fixed
            .iter()
            .filter_map(|m| match m {
                Message::Tool { call_id, content, .. } => Some(format!("{call_id}={content}")),
                _ => None,
            })
            .collect();
        assert_eq!(ids, vec!["a=A".to_string(), format!("b={LOST_RESULT}"), "c=C".into()]);
        assert_eq!(fixed.len(), 6);
    }

    #[test]
    fn compaction_takes_oldest_first_and_spares_the_current_exchange() {
        let big = "x".repeat(40_000);
        let mut msgs = vec![
            user("1"),
            assistant(vec![call("a")]),
            result("a", &big),
            assistant(vec![call("b")]),
            result("b", &big),
            user("2"),
            assistant(vec![call("c")]),
            result("c", &big),
        ];
        let before = estimate_tokens(&msgs, "", 0);
        let n = compact_to_budget(&mut msgs, "", 0, before - 5_000);
        assert_eq!(n, 1);
        assert!(matches!(&msgs[2], Message::Tool { content, .. } if content.starts_with("[Earlier output of grep")));
        assert!(matches!(&msgs[4], Message::Tool { content, .. } if content.len() == 40_000));
        // Even an impossible budget never touches the last exchange.
        compact_to_budget(&mut msgs, "", 0, 0);
        assert!(matches!(&msgs[7], Message::Tool { content, .. } if content.len() == 40_000));
    }
}
