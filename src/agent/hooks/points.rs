//! The five hook points: what each event's hooks are given, and how their answers are combined into what the agent
//! does. Every answer worth telling goes to `notify` (a notice for the user); nothing here touches the conversation.

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::reply::{Permission, PreDecision};
use super::{HookEvent, Hooks, Notify, told};
use tern_protocol::{ApprovalMode, ToolCall, ToolOutput};

/// The most of a tool's result a PostToolUse hook is given.
const MAX_RESPONSE_CHARS: usize = 100_000;

/// What the hooks of a finished call had to say.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct PostNotes {
    /// For the model, appended to the result.
    pub feedback: Vec<String>,
    /// Blocks: each appended as an error note.
    pub blocks: Vec<String>,
}

impl PostNotes {
    /// Appends the notes to the call's result; a block marks it an error.
    pub(crate) fn apply(self, output: &mut ToolOutput) {
        for text in self.feedback {
            output.text.push_str(&format!("\n\n{text}"));
        }
        for text in &self.blocks {
            output.text.push_str(&format!("\n\n{text}"));
        }
        if !self.blocks.is_empty() {
            output.is_error = true;
        }
    }
}

impl Hooks {
    /// The PreToolUse hooks' decision on a prepared call: deny wins over ask, ask over allow; `None` when no hook
    /// decided (the gate alone decides).
    pub(crate) async fn pre_tool_use(
        &self,
        call: &ToolCall,
        input: &Value,
        mode: ApprovalMode,
        cancel: &CancellationToken,
        notify: &Notify<'_>,
    ) -> Option<PreDecision> {
        let event = HookEvent::PreToolUse;
        if !self.wants(event, &call.name) {
            return None;
        }
        let fields = fields(json!({
            "tool_name": call.name,
            "tool_input": input,
            "tool_use_id": call.id,
            "permission_mode": mode.to_string(),
        }));
        let mut decided: Option<PreDecision> = None;
        for (hook, outcome) in self.run_all(event, Some(&call.name), fields, cancel).await {
            let Some(reply) = told(event, hook, outcome, notify) else {
                continue;
            };
            let Some(permission) = reply.decision else {
                continue;
            };
            let name = format!("{} hook {}", event.as_str(), hook.label());
            let verb = match permission {
                Permission::Allow => "allowed",
                Permission::Ask => "asks about",
                Permission::Deny => "denied",
            };
            notify(format!(
                "{name} {verb} {}{}",
                call.name,
                because(reply.reason.as_deref())
            ));
            let rank = |p: Permission| match p {
                Permission::Deny => 2,
                Permission::Ask => 1,
                Permission::Allow => 0,
            };
            if decided.as_ref().is_none_or(|d| rank(permission) > rank(d.permission)) {
                decided = Some(PreDecision {
                    permission,
                    hook: name,
                    reason: reply.reason,
                });
            }
        }
        decided
    }

    /// What the PostToolUse hooks say about a call that ran.
    pub(crate) async fn post_tool_use(
        &self,
        call: &ToolCall,
        input: &Value,
        output: &ToolOutput,
        cancel: &CancellationToken,
        notify: &Notify<'_>,
    ) -> PostNotes {
        let event = HookEvent::PostToolUse;
        let mut notes = PostNotes::default();
        if !self.wants(event, &call.name) {
            return notes;
        }
        let content: String = tern_secrets::mask(&output.text)
            .chars()
            .take(MAX_RESPONSE_CHARS)
            .collect();
        let fields = fields(json!({
            "tool_name": call.name,
            "tool_input": input,
            "tool_use_id": call.id,
            "tool_response": {"content": content, "is_error": output.is_error},
        }));
        for (hook, outcome) in self.run_all(event, Some(&call.name), fields, cancel).await {
            let Some(reply) = told(event, hook, outcome, notify) else {
                continue;
            };
            let name = format!("{} hook {}", event.as_str(), hook.label());
            if let Some(context) = reply.context {
                notify(format!("{name} added feedback on {}", call.name));
                notes.feedback.push(format!("[{name}:]\n{context}"));
            }
            if reply.decision == Some(Permission::Deny) {
                let reason = reply.reason.unwrap_or_else(|| "(no reason given)".into());
                notify(format!("{name} flagged {}: {reason}", call.name));
                notes.blocks.push(format!(
                    "[Error noted by the user's {name} after the call ran: {reason}]"
                ));
            }
        }
        notes
    }

    /// The UserPromptSubmit hooks: `Err(reason)` when one blocks the prompt, else the context they add.
    pub(crate) async fn user_prompt_submit(
        &self,
        prompt: &str,
        cancel: &CancellationToken,
        notify: &Notify<'_>,
    ) -> Result<Vec<String>, String> {
        let event = HookEvent::UserPromptSubmit;
        let fields = fields(json!({ "prompt": prompt }));
        let mut context = Vec::new();
        for (hook, outcome) in self.run_all(event, None, fields, cancel).await {
            let Some(reply) = told(event, hook, outcome, notify) else {
                continue;
            };
            let name = format!("{} hook {}", event.as_str(), hook.label());
            if reply.decision == Some(Permission::Deny) {
                let reason = reply.reason.unwrap_or_else(|| "(no reason given)".into());
                notify(format!("{name} blocked the prompt: {reason}"));
                return Err(format!("the prompt was blocked by {name}: {reason}"));
            }
            if let Some(text) = reply.context {
                notify(format!("{name} added context ({} characters)", text.chars().count()));
                context.push(format!("[Context from the user's {name}:]\n{text}"));
            }
        }
        Ok(context)
    }

    /// The SessionStart hooks matching `source` (`startup`, `resume`, `clear`): the context they add. They cannot
    /// block anything; an exit 2 is shown like a failure.
    pub(crate) async fn session_start(
        &self,
        source: &str,
        cancel: &CancellationToken,
        notify: &Notify<'_>,
    ) -> Vec<String> {
        let event = HookEvent::SessionStart;
        let fields = fields(json!({ "source": source }));
        let mut context = Vec::new();
        for (hook, outcome) in self.run_all(event, Some(source), fields, cancel).await {
            let Some(reply) = told(event, hook, outcome, notify) else {
                continue;
            };
            let name = format!("{} hook {}", event.as_str(), hook.label());
            if reply.decision == Some(Permission::Deny) {
                notify(format!(
                    "{name} exited 2, which cannot block a session start{}",
                    because(reply.reason.as_deref())
                ));
            }
            if let Some(text) = reply.context {
                notify(format!("{name} added context ({} characters)", text.chars().count()));
                context.push(format!("[Context from the user's {name}:]\n{text}"));
            }
        }
        context
    }

    /// The Stop hooks, when the model has answered: `Some(reason)` when one wants the turn to go on. `active` says
    /// whether the turn already goes on because of a Stop hook (Claude Code's `stop_hook_active`).
    pub(crate) async fn stop(&self, active: bool, cancel: &CancellationToken, notify: &Notify<'_>) -> Option<String> {
        let event = HookEvent::Stop;
        let fields = fields(json!({ "stop_hook_active": active }));
        let mut reasons = Vec::new();
        for (hook, outcome) in self.run_all(event, None, fields, cancel).await {
            let Some(reply) = told(event, hook, outcome, notify) else {
                continue;
            };
            if reply.decision == Some(Permission::Deny) {
                let name = format!("{} hook {}", event.as_str(), hook.label());
                let reason = reply.reason.unwrap_or_else(|| "(no reason given)".into());
                notify(format!("{name} keeps the turn going: {reason}"));
                reasons.push(format!("{name}: {reason}"));
            }
        }
        (!reasons.is_empty()).then(|| reasons.join("\n"))
    }
}

fn fields(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn because(reason: Option<&str>) -> String {
    reason.map(|r| format!(": {r}")).unwrap_or_default()
}
