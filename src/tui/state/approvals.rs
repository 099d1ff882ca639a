//! Approval requests: queued while they wait for the user, and said in the transcript once answered.

use super::{AppState, Level};
use tern_protocol::{ApprovalDecision, ApprovalRequest};

impl AppState {
    /// The agent asks to approve a call: the call shows that it waits, and the request joins the queue.
    pub(super) fn ask_approval(&mut self, request: ApprovalRequest) {
        if let Some(&i) = self.call_index.get(&request.call_id)
            && let Some(call) = self.calls.get_mut(i)
        {
            call.wait_for_approval(request.id);
        }
        self.asked.insert(request.id, request.command.clone());
        self.approvals.push_back(request);
    }

    /// Request `id` was answered: its call no longer waits, it leaves the queue, and a line says what was decided.
    pub(super) fn approval_decided(&mut self, id: u64, decision: &ApprovalDecision) {
        if let Some(call) = self.calls.iter_mut().rev().find(|c| c.waiting == Some(id)) {
            call.approval_answered();
        }
        self.approvals.retain(|r| r.id != id);
        self.approval_from.remove(&id);
        let command = self.asked.remove(&id).unwrap_or_default();
        let (text, level) = decision_notice(&command, decision);
        self.notice(text, level);
    }
}

/// The line that says how the user answered an approval request.
fn decision_notice(command: &str, decision: &ApprovalDecision) -> (String, Level) {
    match decision {
        ApprovalDecision::Once => (format!("approved once: {command}"), Level::Info),
        ApprovalDecision::Always => (format!("approved for the session: {command}"), Level::Info),
        ApprovalDecision::Deny { feedback } => match feedback.as_deref().map(str::trim) {
            Some(f) if !f.is_empty() => (format!("denied: {command} — \"{f}\""), Level::Warning),
            _ => (format!("denied: {command}"), Level::Warning),
        },
        ApprovalDecision::Abort => (format!("denied and stopped the turn: {command}"), Level::Warning),
        ApprovalDecision::Hunks {
            accepted,
            edited,
            split,
        } => {
            let hunks = accepted.len() + edited.iter().filter(|e| !accepted.contains(&e.hunk)).count();
            let parts: usize = split
                .iter()
                .map(|s| s.accepted.len() + s.edited.iter().filter(|e| !s.accepted.contains(&e.part)).count())
                .sum();
            let edited = edited.len() + split.iter().map(|s| s.edited.len()).sum::<usize>();
            let parts = if split.is_empty() {
                String::new()
            } else {
                format!(" and {parts} part(s) of split hunks")
            };
            (
                format!("approved {hunks} hunk(s){parts} ({edited} edited): {command}"),
                Level::Info,
            )
        }
        ApprovalDecision::AlwaysSaved { to } => {
            let place = match to {
                tern_protocol::SaveTo::Project => "the project's config",
                tern_protocol::SaveTo::User => "your config",
            };
            (format!("approved, and saved to {place}: {command}"), Level::Info)
        }
        ApprovalDecision::AlwaysEdits { .. } => (format!("approved for the session: {command}"), Level::Info),
        ApprovalDecision::Unattended { frontend } => (
            format!("not run (no one to approve in {frontend}): {command}"),
            Level::Warning,
        ),
    }
}
