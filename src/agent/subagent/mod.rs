//! Subagents: the `spawn` tool starts another agent on one task, with its own conversation and system prompt, the
//! session's tools except `spawn`, and its own iteration limit. It runs the same turn loop (`Session::run_task`), so
//! its calls take the same road: prepare, gate, run, record. The gate is the session's (one mode, one set of
//! "always" answers), its prompts reach the user through the main agent's events, tagged with the subagent
//! (`Event::Subagent`), and approval ids are unique across agents, so an answer finds its call.
//!
//! Several run at once up to `[subagents] max_concurrent`; more wait for a slot and say so. With `wait` the result
//! is the spawn call's result; without it the call returns at once and the report reaches the main agent at its
//! next step, or starts a turn when it is idle (`report.rs`). An interrupt stops them all (a waited-for one through
//! the turn's token, the others through the session's background token); shutdown stops them and waits for them.
//!
//! Each subagent's messages and events go to a session log of its own, `<session dir>/subagents/<id>/session.jsonl`,
//! whose path the main agent records (`Event::SubagentStarted`), so its transcript opens after a resume too.
//!
//! Nothing here talks to a terminal.

pub mod agents;
mod run;
mod tool;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{Notify, Semaphore};
use tokio_util::sync::CancellationToken;

use super::shared::Shared;
use tern_protocol::{Event, TurnEnd};
use tern_provider::Provider;
use tern_session::ToolResultStore;
use tern_tools::{PathPolicy, ToolRegistry};

/// The resolved `[subagents]` settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubagentSettings {
    pub enabled: bool,
    pub max_concurrent: usize,
    pub max_iterations: u32,
}

impl Default for SubagentSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            max_concurrent: 3,
            max_iterations: 30,
        }
    }
}

pub(crate) use tool::{SPAWN_TOOL, SpawnTool};

/// How long shutdown waits for running subagents to stop (their commands get their own grace to end).
const SHUTDOWN_WAIT: Duration = Duration::from_secs(5);

/// What a subagent takes from the main agent.
pub(crate) struct Parent {
    pub shared: Arc<Shared>,
    pub provider: Arc<dyn Provider>,
    pub policy: Arc<PathPolicy>,
    pub results: ToolResultStore,
    pub settings: SubagentSettings,
    /// The main agent's window and compaction; the iteration limit is the subagents' own (`settings`).
    pub limits: crate::session::Limits,
    /// The user's PreToolUse and PostToolUse hooks: they apply to a subagent's calls as to the main agent's.
    pub hooks: crate::hooks::Hooks,
    /// The custom agents `spawn` offers by name (`agents`).
    pub agents: Vec<agents::AgentDef>,
}

/// The session's subagents: starts them, limits how many run at once, and keeps the reports of those started without
/// waiting until the main agent takes them.
pub(crate) struct SubagentManager {
    parent: Parent,
    /// The main agent's tools without `spawn`: a subagent cannot start subagents.
    tools: ToolRegistry,
    slots: Arc<Semaphore>,
    /// Running subagents by id: how to stop them and their tasks, for shutdown.
    running: Mutex<HashMap<String, (CancellationToken, tokio::task::JoinHandle<()>)>>,
    reports: Mutex<Vec<Report>>,
    arrived: Notify,
    started: AtomicU64,
}

/// The report of a subagent started without waiting, until the main agent takes it.
#[derive(Debug, Clone)]
pub(crate) struct Report {
    pub id: String,
    pub label: String,
    pub text: String,
    /// Whether it may start a turn when the main agent is idle: not after the user interrupted it.
    pub starts_turn: bool,
}

/// How a subagent ended.
#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    pub end: TurnEnd,
    /// Its last answer: the report for the main agent.
    pub result: String,
}

/// One subagent to start.
pub(crate) struct Job {
    pub id: String,
    pub label: String,
    pub task: String,
    pub wait: bool,
    pub cancel: CancellationToken,
    /// The custom agent it runs as, if one was named.
    pub agent: Option<agents::AgentDef>,
}

impl SubagentManager {
    /// Makes the session's manager and offers `spawn` in `tools` (the main agent's registry). Subagents get the
    /// registry as it was before, so they are offered everything the main agent has (MCP tools included) but `spawn`.
    pub(crate) fn attach(tools: &mut ToolRegistry, parent: Parent) -> Arc<Self> {
        let mut own = tools.clone();
        own.unregister(SPAWN_TOOL);
        let manager = Arc::new(Self {
            slots: Arc::new(Semaphore::new(parent.settings.max_concurrent)),
            parent,
            tools: own,
            running: Mutex::default(),
            reports: Mutex::default(),
            arrived: Notify::new(),
            started: AtomicU64::new(0),
        });
        tools.register(Arc::new(SpawnTool::new(Arc::clone(&manager))));
        manager
    }

    /// A new subagent id: short, and not the id of an earlier subagent of this session (also a resumed one's).
    fn new_id(&self) -> String {
        let n = self.started.fetch_add(1, Ordering::Relaxed) + 1;
        loop {
            let id = format!("{n}-{:04x}", fastrand::u16(..));
            if self.transcript_path(&id).is_none_or(|p| !p.exists()) {
                return id;
            }
        }
    }

    /// Where subagent `id` logs its transcript: next to the main agent's log. `None` when the session has no log.
    fn transcript_path(&self, id: &str) -> Option<PathBuf> {
        let dir = self.parent.shared.log_dir()?;
        Some(dir.join("subagents").join(id).join("session.jsonl"))
    }

    /// Starts a subagent; returns its id and what to await for its outcome (the waiting spawn call does).
    pub(crate) fn start(
        self: &Arc<Self>,
        label: String,
        task: String,
        wait: bool,
        cancel: CancellationToken,
        agent: Option<agents::AgentDef>,
    ) -> (String, tokio::sync::oneshot::Receiver<Outcome>) {
        let id = self.new_id();
        let transcript = self.transcript_path(&id);
        self.parent.shared.emit(Event::SubagentStarted {
            id: id.clone(),
            label: label.clone(),
            task: task.clone(),
            wait,
            transcript: transcript.as_ref().map(|p| p.display().to_string()),
        });
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job = Job {
            id: id.clone(),
            label,
            task,
            wait,
            cancel: cancel.clone(),
            agent,
        };
        let manager = Arc::clone(self);
        // The task is registered before it can finish and remove itself.
        let mut running = self.running.lock().ok();
        let handle = tokio::spawn(async move {
            let outcome = manager.run(job, transcript).await;
            let _ = tx.send(outcome);
        });
        if let Some(running) = running.as_mut() {
            running.retain(|_, (_, task)| !task.is_finished());
            running.insert(id.clone(), (cancel, handle));
        }
        (id, rx)
    }

    /// Stops every running subagent and waits (bounded) for them to end, so their commands end with them.
    pub(crate) async fn shutdown(&self) {
        let tasks: Vec<_> = self
            .running
            .lock()
            .map(|mut r| r.drain().map(|(_, t)| t).collect())
            .unwrap_or_default();
        for (cancel, _) in &tasks {
            cancel.cancel();
        }
        let all = futures_util::future::join_all(tasks.into_iter().map(|(_, task)| task));
        let _ = tokio::time::timeout(SHUTDOWN_WAIT, all).await;
    }

    /// The custom agent called `name`.
    pub(crate) fn agent(&self, name: &str) -> Option<&agents::AgentDef> {
        self.parent.agents.iter().find(|a| a.name == name)
    }

    /// Keeps the report of a subagent started without waiting, and wakes an idle main agent.
    fn keep_report(&self, report: Report) {
        if let Ok(mut reports) = self.reports.lock() {
            reports.push(report);
        }
        self.arrived.notify_one();
    }

    /// Takes the waiting reports (all, or none unless one may start a turn), and records that they were delivered.
    pub(crate) fn take_reports(&self, only_if_starting: bool) -> Vec<Report> {
        let taken = match self.reports.lock() {
            Ok(mut reports) if !only_if_starting || reports.iter().any(|r| r.starts_turn) => {
                std::mem::take(&mut *reports)
            }
            _ => Vec::new(),
        };
        for report in &taken {
            self.parent.shared.emit(Event::SubagentDelivered {
                id: report.id.clone(),
                label: report.label.clone(),
            });
        }
        taken
    }

    /// Waits until a report may start a turn, and takes the waiting reports.
    pub(crate) async fn next_reports(&self) -> Vec<Report> {
        loop {
            let arrived = self.arrived.notified();
            let taken = self.take_reports(true);
            if !taken.is_empty() {
                return taken;
            }
            arrived.await;
        }
    }
}
