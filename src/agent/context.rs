//! Context governance: what the model receives on each request is a repaired copy of the conversation. Orphan tool
//! results are dropped and every tool call is answered (a lost answer gets a marker). Also the rough token estimate
//! that compaction (`agent::compact`) measures with between the provider's own counts.

use std::collections::HashSet;

use tern_protocol::Message;

/// The answer given to a call whose result was lost (crash, interrupt, a bug).
pub(crate) const LOST_RESULT: &str = "[Tool result unavailable — call was interrupted or lost]";

/// A rough token count: ~4 characters a token for code and English, which errs on the safe side for budgets.
pub(crate) fn estimate_tokens(messages: &[Message], system: &str, tools_json_len: usize) -> u64 {
    (system.len() + tools_json_len) as u64 / 4 + messages.iter().map(message_tokens).sum::<u64>()
}

/// The rough token count of one message (see `estimate_tokens`).
pub(crate) fn message_tokens(message: &Message) -> u64 {
    let chars = match message {
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
    };
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tern_protocol::ToolCall;

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
}
