//! The main agent's side of subagents: reports of those started without waiting go into its conversation at its next
//! step, or start a turn when it is idle; shutdown stops them; and which of their events its own log keeps.

use tokio::sync::mpsc;

use super::Session;
use crate::subagent::Report;
use tern_protocol::{Message, Op};

impl Session {
    /// Gives the model the reports that arrived since its last step, as one user message.
    pub(crate) fn deliver_subagent_reports(&mut self) {
        let Some(manager) = &self.subagents else {
            return;
        };
        let reports = manager.take_reports(false);
        if !reports.is_empty() {
            self.push_message(Message::User {
                content: joined(&reports),
                images: Vec::new(),
            });
        }
    }

    /// The next op for an idle agent: the frontend's (`Ok`), or the text of subagent reports that start a turn
    /// (`Err`: written by models, so it attaches nothing the user's words would, such as `@shot.png`).
    pub(crate) async fn next_op(&self, ops: &mut mpsc::UnboundedReceiver<Op>) -> Option<Result<Op, String>> {
        let Some(manager) = self.subagents.clone() else {
            return ops.recv().await.map(Ok);
        };
        tokio::select! {
            biased;
            op = ops.recv() => op.map(Ok),
            reports = manager.next_reports() => Some(Err(joined(&reports))),
        }
    }

    /// Stops the subagents that still run, and waits for them.
    pub(crate) async fn stop_subagents(&self) {
        if let Some(manager) = &self.subagents {
            manager.shutdown().await;
        }
    }
}

fn joined(reports: &[Report]) -> String {
    reports
        .iter()
        .map(|r| r.text.as_str())
        .collect::<Vec<_>>()
        .join("\n\n---\n\n")
}
