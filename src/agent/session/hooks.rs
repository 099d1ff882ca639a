//! Where the agent calls its hooks, apart from the gate (`agent/calls/approve.rs`): the session's start, the user's
//! prompt, a call that ran, and the end of a turn. Each answer worth telling becomes a notice through the agent's
//! `emit`, so it is shown and recorded like any other event.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::Session;
use crate::compact::Trigger;
use crate::hooks::{HookEvent, MAX_STOP_CONTINUES};
use crate::shared::Shared;
use tern_protocol::{Event, Message, TurnEnd};

/// The notice sender the hook points are given.
fn notifier(shared: &Arc<Shared>) -> impl Fn(String) + use<> {
    let shared = Arc::clone(shared);
    move |text| shared.emit(Event::Notice { text })
}

impl Session {
    /// The SessionStart hooks (`startup` for a new session, `resume` for a resumed one, `clear` after a new
    /// conversation); what they add is told to the model with the next user message.
    pub(crate) async fn session_start_hooks(&mut self, source: &str, cancel: &CancellationToken) {
        if !self.hooks.wants(HookEvent::SessionStart, source) {
            return;
        }
        let notify = notifier(&self.shared);
        let context = self.hooks.session_start(source, cancel, &notify).await;
        if context.is_empty() {
            return;
        }
        let context = context.join("\n\n");
        self.pending_note = Some(match self.pending_note.take() {
            Some(note) => format!("{note}\n\n{context}"),
            None => context,
        });
    }

    /// The UserPromptSubmit hooks on the user's prompt: the context they add (`None` for none), or how the turn ends
    /// when one blocked it (the prompt then never reaches the model).
    pub(crate) async fn prompt_hooks(
        &self,
        prompt: &str,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, TurnEnd> {
        if self.hooks.is_empty() {
            return Ok(None);
        }
        let notify = notifier(&self.shared);
        let checked = self.hooks.user_prompt_submit(prompt, cancel, &notify).await;
        if cancel.is_cancelled() {
            return Err(TurnEnd::Interrupted);
        }
        match checked {
            Err(message) => Err(TurnEnd::Error { message }),
            Ok(context) if context.is_empty() => Ok(None),
            Ok(context) => Ok(Some(context.join("\n\n"))),
        }
    }

    /// The Stop hooks (`event`; SubagentStop for a subagent's task) when the model has answered: while one asks to go
    /// on (and at most `MAX_STOP_CONTINUES` times), its reason goes to the model and the turn continues. Returns how
    /// the turn ends.
    pub(crate) async fn stop_hooks(
        &mut self,
        event: HookEvent,
        mut end: TurnEnd,
        cancel: &CancellationToken,
    ) -> TurnEnd {
        let mut continued = 0;
        while matches!(end, TurnEnd::Completed) && !cancel.is_cancelled() && !self.hooks.is_empty() {
            let notify = notifier(&self.shared);
            let agent_type = self.agent_type().to_string();
            let Some(reason) = self
                .hooks
                .stop(event, &agent_type, continued > 0, cancel, &notify)
                .await
            else {
                break;
            };
            if continued == MAX_STOP_CONTINUES {
                notify(format!(
                    "the {} hooks kept this turn going {MAX_STOP_CONTINUES} times already; it ends now",
                    event.as_str()
                ));
                break;
            }
            continued += 1;
            self.push_message(Message::User {
                content: format!("[The user's Stop hook asks you to go on before you finish:]\n{reason}"),
                images: Vec::new(),
            });
            end = super::turn::Turn::new(self, cancel).run().await;
        }
        end
    }

    /// The SubagentStart hooks when this session (a subagent's) is given `task`: the task with what they add for the
    /// subagent after it.
    pub(crate) async fn subagent_start_hooks(&self, task: &str, cancel: &CancellationToken) -> String {
        let agent_type = self.agent_type();
        if !self.hooks.wants(HookEvent::SubagentStart, agent_type) {
            return task.to_string();
        }
        let notify = notifier(&self.shared);
        let context = self.hooks.subagent_start(agent_type, cancel, &notify).await;
        if context.is_empty() {
            return task.to_string();
        }
        format!("{task}\n\n{}", context.join("\n\n"))
    }

    /// The PreCompact hooks before the conversation is summarised: whether the summary may go ahead (`false` when one
    /// blocked it, or the user interrupted meanwhile).
    pub(crate) async fn pre_compact_hooks(
        &self,
        trigger: Trigger,
        focus: Option<&str>,
        cancel: &CancellationToken,
    ) -> bool {
        let trigger = match trigger {
            Trigger::Manual => "manual",
            Trigger::Threshold | Trigger::Overflow => "auto",
        };
        if !self.hooks.wants(HookEvent::PreCompact, trigger) {
            return true;
        }
        let notify = notifier(&self.shared);
        let allowed = self.hooks.pre_compact(trigger, focus, cancel, &notify).await.is_ok();
        allowed && !cancel.is_cancelled()
    }

    /// The SessionEnd hooks (`reason`: `clear` for a new conversation, `prompt_input_exit` when the user quits,
    /// `other`).
    pub(crate) async fn session_end_hooks(&self, reason: &str) {
        if !self.hooks.wants(HookEvent::SessionEnd, reason) {
            return;
        }
        let notify = notifier(&self.shared);
        let cancel = CancellationToken::new();
        self.hooks
            .tell(HookEvent::SessionEnd, reason, None, &cancel, &notify)
            .await;
    }
}
