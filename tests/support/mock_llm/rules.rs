//! The request rules the real APIs enforce that a client can get wrong across a tool-use loop, checked so the scripted
//! model refuses (400, in the API's own words) what the real one would:
//! - Anthropic extended thinking (<https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking>): a budget
//!   of at least 1,024 tokens below `max_tokens`, and in a tool-use loop the turn's first assistant message starting
//!   with a `thinking` or `redacted_thinking` block.
//! - OpenAI Responses with `store: false`: no item ids (they refer to nothing stored), every `function_call_output`
//!   answering a `function_call` of the input.

use serde_json::Value;

use super::Format;

/// What the real API would refuse in `body`, as its error message.
pub(super) fn violation(format: Format, body: &Value) -> Option<String> {
    match format {
        Format::Anthropic => anthropic(body),
        Format::Responses => responses(body),
        Format::OpenAi => None,
    }
}

fn anthropic(body: &Value) -> Option<String> {
    let thinking = body.get("thinking")?;
    if thinking["type"] != "enabled" {
        return None;
    }
    let budget = thinking["budget_tokens"].as_u64().unwrap_or(0);
    let max_tokens = body["max_tokens"].as_u64().unwrap_or(0);
    if budget < 1024 {
        return Some("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024".into());
    }
    if budget >= max_tokens {
        return Some("`max_tokens` must be greater than `thinking.budget_tokens`".into());
    }
    let messages = body["messages"].as_array()?;
    let has_results = |m: &Value| {
        m["content"]
            .as_array()
            .is_some_and(|c| c.iter().any(|b| b["type"] == "tool_result"))
    };
    if !messages.last().is_some_and(has_results) {
        return None;
    }
    // Back to the user message without tool results that began the turn; the assistant message after it opens it.
    let start = messages
        .iter()
        .rposition(|m| m["role"] == "user" && !has_results(m))
        .map_or(0, |i| i + 1);
    let first = messages[start..].iter().find(|m| m["role"] == "assistant")?;
    let kind = first["content"][0]["type"].as_str().unwrap_or_default();
    if kind == "thinking" || kind == "redacted_thinking" {
        return None;
    }
    Some(format!(
        "messages.{start}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{kind}`. When \
         `thinking` is enabled, a final `assistant` message must start with a thinking block"
    ))
}

fn responses(body: &Value) -> Option<String> {
    let input = body["input"].as_array()?;
    if body["store"] == false
        && let Some(id) = input.iter().find_map(|item| item.get("id").and_then(Value::as_str))
    {
        return Some(format!(
            "Item with id '{id}' not found. Items are not persisted when `store` is set to false."
        ));
    }
    let calls: Vec<&str> = input
        .iter()
        .filter(|item| item["type"] == "function_call")
        .filter_map(|item| item["call_id"].as_str())
        .collect();
    input
        .iter()
        .filter(|item| item["type"] == "function_call_output")
        .filter_map(|item| item["call_id"].as_str())
        .find(|id| !calls.contains(id))
        .map(|id| format!("No tool call found for function call output with call_id {id}."))
}
