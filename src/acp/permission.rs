//! tern's approval prompt as ACP's `session/request_permission`, and the editor's answer as tern's decision. The
//! options are those the TUI would offer: once, always (only when the gate proposed rules or an edit scope), reject.

use serde_json::{Value, json};
use tern_protocol::{ApprovalDecision, ApprovalRequest, EditScope};

const ALLOW_ONCE: &str = "allow_once";
const ALLOW_ALWAYS: &str = "allow_always";
const REJECT: &str = "reject_once";

/// The params of `session/request_permission` for `request` in session `session`.
pub(crate) fn params(session: &str, request: &ApprovalRequest) -> Value {
    let mut options = vec![json!({"optionId": ALLOW_ONCE, "name": "Allow once", "kind": "allow_once"})];
    if let Some(name) = always_name(request) {
        options.push(json!({"optionId": ALLOW_ALWAYS, "name": name, "kind": "allow_always"}));
    }
    options.push(json!({"optionId": REJECT, "name": "Reject", "kind": "reject_once"}));
    json!({
        "sessionId": session,
        "toolCall": tool_call(request),
        "options": options,
    })
}

/// The call being asked about: what it would do (every character a command would act on) and why it asks.
fn tool_call(request: &ApprovalRequest) -> Value {
    let (command, _) = tern_text::reveal(&request.command);
    let mut text = format!("{}\n\n{}", command, tern_text::clean(&request.reason));
    if !request.proposed_rules.is_empty() {
        text.push_str(&format!(
            "\n\nAlways would allow: {}",
            request.proposed_rules.join(", ")
        ));
    }
    let mut content = vec![json!({"type": "content", "content": {"type": "text", "text": text}})];
    content.extend(request.diffs.iter().map(crate::updates::diff));
    json!({
        "toolCallId": request.call_id,
        // Editors show the title first: it reveals what the text below does, invisible characters included.
        "title": title(&request.tool, &command),
        "status": "pending",
        "content": content,
    })
}

/// The tool and what it would do, on one line; a file tool's description already starts with its name
/// (`read_file /w/a.txt`), which is not said twice.
fn title(tool: &str, revealed: &str) -> String {
    let line = tern_text::one_line(revealed);
    match line.split_once(' ') {
        Some((first, _)) if first == tool => line.into_owned(),
        _ => format!("{} {line}", tern_text::clean(tool)),
    }
}

/// The label of the "always" option, when the request has one to offer.
fn always_name(request: &ApprovalRequest) -> Option<String> {
    if !request.proposed_rules.is_empty() {
        return Some(format!("Always allow {}", request.proposed_rules.join(", ")));
    }
    if let Some(process) = &request.always_input {
        return Some(format!("Always allow input to {}", tern_text::one_line(process)));
    }
    request
        .always_file
        .as_ref()
        .map(|file| format!("Always allow edits to {}", tern_text::one_line(file)))
}

/// The decision for the editor's answer to the request: its chosen option, or `None` when it cancelled.
pub(crate) fn decision(request: &ApprovalRequest, answer: &Value) -> ApprovalDecision {
    let outcome = &answer["outcome"];
    if outcome["outcome"] == "cancelled" {
        // The prompt was cancelled: the call does not run and the turn ends.
        return ApprovalDecision::Abort;
    }
    match outcome["optionId"].as_str() {
        Some(ALLOW_ONCE) => ApprovalDecision::Once,
        Some(ALLOW_ALWAYS) if !request.proposed_rules.is_empty() || request.always_input.is_some() => {
            ApprovalDecision::Always
        }
        Some(ALLOW_ALWAYS) if request.always_file.is_some() => ApprovalDecision::AlwaysEdits { scope: EditScope::File },
        // Reject, an option we did not offer, or an answer we cannot read: the call does not run.
        _ => ApprovalDecision::Deny { feedback: None },
    }
}

#[cfg(test)]
mod tests;
