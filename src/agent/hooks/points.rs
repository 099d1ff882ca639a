//! The hook points: what each event's hooks are given, and how their answers are combined into what the agent does.
//! Every answer worth telling goes to `notify` (a notice for the user); nothing here touches the conversation.

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::call::{HookCall, tool_response};
use super::reply::{Permission, PreDecision, PreHooks};
use super::{HookEvent, Hooks, Notify, told};
use tern_protocol::{ApprovalMode, ToolOutput};
use tern_tools::ClaudeCall;

/// The most of a tool's result a PostToolUse hook is given.
const MAX_RESPONSE_CHARS: usize = 100_000;

/// What the hooks of a finished call had to say.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct PostNotes {
    /// For the model, appended to the result.
    pub feedback: Vec<String>,
    /// Blocks: each appended as an error note.
    pub blocks: Vec<String>,
    /// A hook stopped the agent (`continue: false`): what the user is told.
    pub stop: Option<String>,
}

impl PostNotes {
    /// Appends the notes to the call's result; a block marks it an error.
    pub(crate) fn apply(&self, output: &mut ToolOutput) {
        for text in &self.feedback {
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
    /// Whether any hook of a tool event is for `call`, under any of the names it is shown by.
    pub(crate) fn wants_call(&self, event: HookEvent, call: &HookCall) -> bool {
        call.shown
            .iter()
            .any(|shown| call.names(shown).iter().any(|name| self.wants(event, name)))
    }

    /// The PreToolUse hooks on a prepared call, each shown the call as Claude Code would have made it (a patch once
    /// per file). Deny wins over ask, ask over allow; an `updatedInput` and a `continue: false` are passed on.
    pub(crate) async fn pre_tool_use(
        &self,
        call: &HookCall,
        mode: ApprovalMode,
        cancel: &CancellationToken,
        notify: &Notify<'_>,
    ) -> PreHooks {
        let event = HookEvent::PreToolUse;
        let mut said = PreHooks::default();
        for shown in &call.shown {
            let fields = asked_fields(call, shown, mode);
            for (hook, outcome) in self.run_all(event, &call.names(shown), fields, cancel).await {
                let Some(reply) = told(event, hook, outcome, notify) else {
                    continue;
                };
                let name = format!("{} hook {}", event.as_str(), hook.label());
                if let Some(reason) = reply.stop {
                    notify(format!("{name} stopped the agent: {reason}"));
                    said.stop.get_or_insert(format!("{name} stopped the agent: {reason}"));
                }
                if let Some(input) = reply.updated_input {
                    said.updated_input = Some((input, name.clone()));
                }
                let Some(permission) = reply.decision else {
                    continue;
                };
                let verb = match permission {
                    Permission::Allow => "allowed",
                    Permission::Ask => "asks about",
                    Permission::Deny => "denied",
                };
                notify(format!(
                    "{name} {verb} {}{}",
                    shown.name,
                    because(reply.reason.as_deref())
                ));
                let rank = |p: Permission| match p {
                    Permission::Deny => 2,
                    Permission::Ask => 1,
                    Permission::Allow => 0,
                };
                if said
                    .decision
                    .as_ref()
                    .is_none_or(|d| rank(permission) > rank(d.permission))
                {
                    said.decision = Some(PreDecision {
                        permission,
                        hook: name,
                        reason: reply.reason,
                    });
                }
            }
        }
        said
    }

    /// The PermissionRequest hooks on a call the user is about to be asked about, each shown the call as Claude Code
    /// would have made it: `Deny` (with the first deny's reason) over `Allow`; `None` when none decided, and the user
    /// is asked. The caller still asks the user when the question is one no hook may waive (`firm_question`).
    pub(crate) async fn permission_request(
        &self,
        call: &HookCall,
        mode: ApprovalMode,
        cancel: &CancellationToken,
        notify: &Notify<'_>,
    ) -> PreHooks {
        let event = HookEvent::PermissionRequest;
        let mut said = PreHooks::default();
        let (mut allowed_by, mut every_part_allowed) = (None, true);
        for shown in &call.shown {
            let mut fields = asked_fields(call, shown, mode);
            fields.insert("permission_suggestions".into(), json!([]));
            let mut allowed = None;
            for (hook, outcome) in self.run_all(event, &call.names(shown), fields, cancel).await {
                let Some(reply) = told(event, hook, outcome, notify) else {
                    continue;
                };
                let name = format!("{} hook {}", event.as_str(), hook.label());
                if let Some(reason) = reply.stop {
                    notify(format!("{name} stopped the agent: {reason}"));
                    said.stop.get_or_insert(format!("{name} stopped the agent: {reason}"));
                }
                match reply.decision {
                    Some(Permission::Deny) if said.decision.is_none() => {
                        notify(format!(
                            "{name} denied {}{}",
                            shown.name,
                            because(reply.reason.as_deref())
                        ));
                        said.decision = Some(PreDecision {
                            permission: Permission::Deny,
                            hook: name,
                            reason: reply.reason,
                        });
                    }
                    Some(Permission::Allow) => allowed = allowed.or(Some(name)),
                    _ => {}
                }
            }
            if said.decision.is_some() {
                return said;
            }
            // A call shown as several (a patch, once per file) is answered only when every part is allowed.
            match allowed {
                Some(name) => {
                    allowed_by.get_or_insert(name);
                }
                None => every_part_allowed = false,
            }
        }
        if let Some(hook) = allowed_by.filter(|_| every_part_allowed) {
            notify(format!("{hook} answered the prompt for you: allowed"));
            said.decision = Some(PreDecision {
                permission: Permission::Allow,
                hook,
                reason: None,
            });
        }
        said
    }

    /// What the hooks say about a call that ran: PostToolUse hooks for a success (given the result in the shape Claude
    /// Code gives its tools' results), PostToolUseFailure hooks for an error (given the error's text).
    pub(crate) async fn post_tool_use(
        &self,
        call: &HookCall,
        output: &ToolOutput,
        cancel: &CancellationToken,
        notify: &Notify<'_>,
    ) -> PostNotes {
        let event = if output.is_error {
            HookEvent::PostToolUseFailure
        } else {
            HookEvent::PostToolUse
        };
        let mut notes = PostNotes::default();
        if !self.wants_call(event, call) {
            return notes;
        }
        let text: String = tern_secrets::mask(&output.text)
            .chars()
            .take(MAX_RESPONSE_CHARS)
            .collect();
        for shown in &call.shown {
            let mut fields = fields(json!({
                "tool_name": shown.name,
                "tool_input": shown.input,
                "tool_use_id": call.id,
            }));
            if output.is_error {
                fields.insert("error".into(), json!(text));
            } else {
                fields.insert("tool_response".into(), tool_response(shown, output, &text));
            }
            for (hook, outcome) in self.run_all(event, &call.names(shown), fields, cancel).await {
                let Some(reply) = told(event, hook, outcome, notify) else {
                    continue;
                };
                let name = format!("{} hook {}", event.as_str(), hook.label());
                if let Some(context) = reply.context {
                    notify(format!("{name} added feedback on {}", shown.name));
                    notes.feedback.push(format!("[{name}:]\n{context}"));
                }
                if reply.decision == Some(Permission::Deny) {
                    let reason = reply.reason.unwrap_or_else(|| "(no reason given)".into());
                    notify(format!("{name} flagged {}: {reason}", shown.name));
                    notes.blocks.push(format!(
                        "[Error noted by the user's {name} after the call ran: {reason}]"
                    ));
                }
                if let Some(reason) = reply.stop {
                    notify(format!("{name} stopped the agent: {reason}"));
                    notes.stop.get_or_insert(format!("{name} stopped the agent: {reason}"));
                }
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
        for (hook, outcome) in self.run_all(event, &[], fields, cancel).await {
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

    /// The hooks that may only add context: SessionStart matching `subject`, the start source (`startup`, `resume`,
    /// `clear`), and SubagentStart matching the subagent's type. Returns the context they add; an exit 2 cannot block
    /// anything and is shown like a failure.
    pub(crate) async fn start_context(
        &self,
        event: HookEvent,
        subject: &str,
        cancel: &CancellationToken,
        notify: &Notify<'_>,
    ) -> Vec<String> {
        let (key, started) = match event {
            HookEvent::SubagentStart => ("agent_type", "a subagent"),
            _ => ("source", "a session start"),
        };
        let mut fields = Map::new();
        fields.insert(key.into(), json!(subject));
        let mut context = Vec::new();
        for (hook, outcome) in self.run_all(event, &[subject], fields, cancel).await {
            let Some(reply) = told(event, hook, outcome, notify) else {
                continue;
            };
            let name = format!("{} hook {}", event.as_str(), hook.label());
            if reply.decision == Some(Permission::Deny) {
                notify(format!(
                    "{name} exited 2, which cannot block {started}{}",
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

    /// The Stop hooks when the model has answered (`SubagentStop` when a subagent's model has): `Some(reason)` when
    /// one wants the turn to go on, unless one stopped the agent (`continue: false`, which wins). `active` says whether
    /// the turn already goes on because of such a hook (Claude Code's `stop_hook_active`).
    pub(crate) async fn stop(
        &self,
        event: HookEvent,
        agent_type: &str,
        active: bool,
        cancel: &CancellationToken,
        notify: &Notify<'_>,
    ) -> Option<String> {
        let mut fields = fields(json!({ "stop_hook_active": active }));
        let subject = agent_type;
        if event == HookEvent::SubagentStop {
            fields.insert("agent_type".into(), json!(subject));
        }
        let subjects: &[&str] = if event.has_matcher() { &[subject] } else { &[] };
        let mut reasons = Vec::new();
        let mut stopped = false;
        for (hook, outcome) in self.run_all(event, subjects, fields, cancel).await {
            let Some(reply) = told(event, hook, outcome, notify) else {
                continue;
            };
            let name = format!("{} hook {}", event.as_str(), hook.label());
            if let Some(reason) = reply.stop {
                notify(format!("{name} stopped the agent: {reason}"));
                stopped = true;
            } else if reply.decision == Some(Permission::Deny) {
                let reason = reply.reason.unwrap_or_else(|| "(no reason given)".into());
                notify(format!("{name} keeps the turn going: {reason}"));
                reasons.push(format!("{name}: {reason}"));
            }
        }
        (!stopped && !reasons.is_empty()).then(|| reasons.join("\n"))
    }

    /// The PreCompact hooks before a compaction (`trigger`: `manual` or `auto`; `instructions`: what the user asked
    /// the summary to keep): `Err(reason)` when one blocks it.
    pub(crate) async fn pre_compact(
        &self,
        trigger: &str,
        instructions: Option<&str>,
        cancel: &CancellationToken,
        notify: &Notify<'_>,
    ) -> Result<(), String> {
        let event = HookEvent::PreCompact;
        let fields = fields(json!({ "trigger": trigger, "custom_instructions": instructions.unwrap_or_default() }));
        for (hook, outcome) in self.run_all(event, &[trigger], fields, cancel).await {
            let Some(reply) = told(event, hook, outcome, notify) else {
                continue;
            };
            if reply.decision == Some(Permission::Deny) {
                let name = format!("{} hook {}", event.as_str(), hook.label());
                let reason = reply.reason.unwrap_or_else(|| "(no reason given)".into());
                notify(format!("{name} blocked the compaction: {reason}"));
                return Err(format!("{name}: {reason}"));
            }
        }
        Ok(())
    }

    /// The SessionEnd hooks (`reason`: `clear`, `prompt_input_exit`, `other`) or the Notification hooks (`kind`:
    /// `permission_prompt`, `elicitation_dialog`; with `message`): told, never asked; what they answer is shown only
    /// when they fail.
    pub(crate) async fn tell(
        &self,
        event: HookEvent,
        subject: &str,
        message: Option<&str>,
        cancel: &CancellationToken,
        notify: &Notify<'_>,
    ) {
        let mut fields = Map::new();
        match event {
            HookEvent::SessionEnd => {
                fields.insert("reason".into(), json!(subject));
            }
            _ => {
                fields.insert("notification_type".into(), json!(subject));
                fields.insert("message".into(), json!(message.unwrap_or_default()));
                fields.insert("title".into(), json!("tern"));
            }
        }
        for (hook, outcome) in self.run_all(event, &[subject], fields, cancel).await {
            told(event, hook, outcome, notify);
        }
    }
}

/// What the hooks asked about a call (PreToolUse, PermissionRequest) are told of it, as Claude Code tells them.
fn asked_fields(call: &HookCall, shown: &ClaudeCall, mode: ApprovalMode) -> Map<String, Value> {
    fields(json!({
        "tool_name": shown.name,
        "tool_input": shown.input,
        "tool_use_id": call.id,
        "permission_mode": mode.claude_code_name(),
    }))
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
