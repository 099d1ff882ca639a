//! One subagent's run: wait for a slot, build a `Session` around the task (its own conversation, prompt, log, result
//! store and file tracker; the session's gate, provider, tools but `spawn`, and path policy), run one turn of the
//! shared turn loop, and pass every event it emits to the main agent tagged with the subagent.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc;

use super::{Job, Outcome, Report, SubagentManager};
use crate::checkpoint::Checkpoints;
use crate::session::{Limits, Parts, Session};
use tern_protocol::{Event, SUBAGENT_QUEUED, TurnEnd, Usage};
use tern_session::{SessionLog, SessionMeta, ToolResultStore};
use tern_tools::ToolRegistry;

impl SubagentManager {
    /// Runs one subagent to its end, tells the main agent how it ended, and keeps its report when nobody waits for
    /// it.
    pub(super) async fn run(self: Arc<Self>, job: Job, transcript: Option<std::path::PathBuf>) -> Outcome {
        let started = Instant::now();
        let tag = |inner: Event| Event::Subagent {
            id: job.id.clone(),
            label: job.label.clone(),
            inner: Box::new(inner),
        };
        let shared = &self.parent.shared;
        let permit = match Arc::clone(&self.slots).try_acquire_owned() {
            Ok(permit) => Some(permit),
            Err(_) => {
                shared.emit(tag(Event::Notice {
                    text: format!(
                        "{SUBAGENT_QUEUED} {} subagents are running, the most at once ([subagents] max_concurrent)",
                        self.parent.settings.max_concurrent
                    ),
                }));
                tokio::select! {
                    permit = Arc::clone(&self.slots).acquire_owned() => permit.ok(),
                    _ = job.cancel.cancelled() => None,
                }
            }
        };
        let (outcome, usage, steps) = match permit {
            Some(_permit) => self.drive(&job, transcript, &tag).await,
            None => (
                Outcome {
                    end: TurnEnd::Interrupted,
                    result: "interrupted before it started".into(),
                },
                Usage::default(),
                0,
            ),
        };
        shared.emit(Event::SubagentFinished {
            id: job.id.clone(),
            label: job.label.clone(),
            end: outcome.end.clone(),
            result: outcome.result.clone(),
            usage,
            steps,
            elapsed_ms: started.elapsed().as_millis() as u64,
        });
        if !job.wait {
            self.keep_report(Report {
                id: job.id.clone(),
                label: job.label.clone(),
                text: announcement(&job, &outcome),
                starts_turn: !matches!(outcome.end, TurnEnd::Interrupted | TurnEnd::Aborted),
            });
        }
        if let Ok(mut running) = self.running.lock() {
            running.remove(&job.id);
        }
        outcome
    }

    /// Builds the subagent, runs its turn and forwards its events; returns its outcome, its tokens and its model
    /// requests.
    async fn drive(
        &self,
        job: &Job,
        transcript: Option<std::path::PathBuf>,
        tag: &impl Fn(Event) -> Event,
    ) -> (Outcome, Usage, u64) {
        let parent = &self.parent;
        let (events, mut received) = mpsc::unbounded_channel();
        let log = transcript.and_then(|path| {
            let meta = SessionMeta::new(
                &job.id,
                &parent.policy.root().display().to_string(),
                parent.provider.name(),
                parent.provider.model(),
            );
            SessionLog::create(&path, &meta)
                .map_err(|e| tracing::warn!(error = %e, "cannot create a subagent's log"))
                .ok()
        });
        let dir = log.as_ref().and_then(|l| l.path().parent().map(|p| p.to_path_buf()));
        // Its large results go beside the main agent's, where the path policy already lets reads go.
        let results = ToolResultStore::new(parent.results.dir().join("subagents").join(&job.id));
        let _ = results.ensure_dir();
        let (prompt, tools, model) = self.as_agent(job, tag);
        let mut session = Session::new(Parts {
            provider: Arc::clone(&parent.provider),
            tools,
            policy: Arc::clone(&parent.policy),
            prompt: prompt.into(),
            limits: Limits {
                max_iterations: parent.settings.max_iterations,
                ..parent.limits
            },
            results,
            shared: Arc::new(parent.shared.child(events, log)),
            // No turn is begun on them: the main agent's turn snapshots cover the work tree.
            checkpoints: Checkpoints::new(dir.as_deref(), parent.policy.root()),
            hooks: parent.hooks.clone(),
        })
        .with_model(model)
        .with_agent_type(job.agent.as_ref().map(|agent| agent.name.clone()));
        let work = session.run_task(&job.task, &job.cancel);
        tokio::pin!(work);
        let mut steps = 0;
        let mut forward = |event: Event| {
            steps += u64::from(matches!(event, Event::TokenUsage { .. }));
            parent.shared.emit(tag(event));
        };
        let (end, answer, usage) = loop {
            tokio::select! {
                biased;
                Some(event) = received.recv() => forward(event),
                done = &mut work => break done,
            }
        };
        while let Ok(event) = received.try_recv() {
            forward(event);
        }
        let result = match (&end, answer) {
            (TurnEnd::Error { message }, _) => format!("Error: {message}"),
            (_, Some(answer)) => answer,
            (TurnEnd::Interrupted, None) => "interrupted before it answered".to_string(),
            (TurnEnd::Aborted, None) => "the user aborted it at an approval prompt".to_string(),
            (_, None) => "(it finished without a report)".to_string(),
        };
        (Outcome { end, result }, usage, steps)
    }

    /// What a subagent runs with: its system prompt, tools and model, a custom agent's (`job.agent`) where it names
    /// them (its prompt before the task's, its tools narrowed from the main agent's, its model), and what it named that
    /// cannot be (an unknown tool, a model alias of another provider) told as notices.
    fn as_agent(&self, job: &Job, tag: &impl Fn(Event) -> Event) -> (String, ToolRegistry, Option<String>) {
        let parent = &self.parent;
        let prompt = system_prompt(&job.task, parent.policy.root());
        let Some(agent) = &job.agent else {
            return (prompt, self.tools.clone(), None);
        };
        let (tools, warnings) = agent.tools(&self.tools);
        for text in warnings {
            parent.shared.emit(tag(Event::Notice { text }));
        }
        let model = match agent
            .model
            .as_deref()
            .map(|m| super::agents::model_for(m, parent.provider.name()))
        {
            Some(Ok(chosen)) => chosen,
            Some(Err(why)) => {
                parent.shared.emit(tag(Event::Notice {
                    text: format!("agent {}: {why}", agent.name),
                }));
                None
            }
            None => None,
        };
        (format!("{}\n\n{prompt}", agent.prompt), tools, model)
    }
}

/// The system prompt of a subagent: its task, where it works, and what it may and may not do.
fn system_prompt(task: &str, workspace: &std::path::Path) -> String {
    format!(
        "# Subagent\n\
         You are a subagent of tern, a coding assistant: the main agent started you to do one task, in the \
         workspace {workspace} ({os}).\n\n\
         ## Your task\n{task}\n\n\
         ## Rules\n\
         1. Do this task and nothing else. Nobody reads your messages while you work: the user may only be asked to \
         approve your tool calls.\n\
         2. You cannot start subagents or talk to the user. Your tool calls take the same approval as the main \
         agent's: a call may be denied; then take another way, or say in your report what you could not do.\n\
         3. Prefer read_file, grep and find_files to shell commands for reading and searching; edit with the edit \
         tools.\n\
         4. Finish with your report to the main agent, as your last message: concise and concrete (what you did, \
         what you found with paths and line numbers, what is left). It is all the main agent sees of your work.",
        workspace = workspace.display(),
        os = std::env::consts::OS,
    )
}

/// What the main agent reads when a subagent it did not wait for ends (the reference's announcement).
fn announcement(job: &Job, outcome: &Outcome) -> String {
    let how = match outcome.end {
        TurnEnd::Completed => "completed",
        TurnEnd::IterationLimit => "stopped at its iteration limit",
        TurnEnd::Interrupted => "was interrupted by the user",
        TurnEnd::Aborted => "was stopped by the user at an approval prompt",
        TurnEnd::Error { .. } => "failed",
    };
    format!(
        "[Subagent '{}' (id {}) {how}]\n\nTask: {}\n\nResult:\n{}\n\nTell the user what it found, briefly; it was \
         started without waiting, so this arrives on its own.",
        job.label, job.id, job.task, outcome.result
    )
}

/// The spawn call's result when the main agent waited.
pub(super) fn inline_result(label: &str, id: &str, outcome: &Outcome) -> tern_protocol::ToolOutput {
    use tern_protocol::ToolOutput;
    match &outcome.end {
        TurnEnd::Completed => ToolOutput::text(format!(
            "[Subagent '{label}' (id {id}) completed]\n\n{}",
            outcome.result
        )),
        TurnEnd::IterationLimit => ToolOutput::text(format!(
            "[Subagent '{label}' (id {id}) stopped at its iteration limit]\n\n{}",
            outcome.result
        )),
        TurnEnd::Interrupted => ToolOutput::error(format!(
            "Error: subagent '{label}' (id {id}) was interrupted by the user. What it had said: {}",
            outcome.result
        )),
        TurnEnd::Aborted => ToolOutput::error(format!(
            "Error: subagent '{label}' (id {id}) was stopped: the user aborted it at an approval prompt."
        )),
        TurnEnd::Error { .. } => ToolOutput::error(format!(
            "Error: subagent '{label}' (id {id}) failed: {}",
            outcome.result
        )),
    }
}
